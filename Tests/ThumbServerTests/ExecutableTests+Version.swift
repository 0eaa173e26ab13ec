import Foundation
import Testing
import TestSupport

/// `thumbd --version`, `-h` and the manual page (issue 29, item 1), as the built binary prints them.
extension ExecutableTests {
    /// What a command prints on stdout, or nil when it cannot run or fails.
    static func output(of command: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    /// `--version` and `-V`: thumbd's version and commit (a version and 12 hex digits in a
    /// package; in a plain `swift build`, which bakes in neither, that it is an unversioned
    /// build, in words: it printed `dev`), then the libvips and FFmpeg loaded, checked against
    /// pkg-config's and ffmpeg's own words; before any config is read.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pkg-config"), "needs pkg-config"))
    func versionNamesThumbdAndTheLibrariesItRunsWith() throws {
        let vips = try #require(Self.output(of: "/usr/bin/pkg-config", ["--modversion", "vips"]))
        let avformat = try #require(Self.output(of: "/usr/bin/pkg-config", ["--modversion", "libavformat"]))
        for flag in ["--version", "-V"] {
            let version = try run([flag, "--config", "/nonexistent/thumbd.json"])
            #expect(version.status == 0, "\(version.error)")
            let lines = version.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(version.output)")
            let unversioned = "thumbd, an unversioned build (a plain swift build: no version or git commit was baked in; "
                + "packaging/build-deb.sh bakes in both)"
            #expect(lines.first == unversioned
                    || lines.first?.wholeMatch(of: /thumbd [0-9][0-9A-Za-z.+~-]* \(commit [0-9a-f]{12}(-dirty)?\)/) != nil,
                    "\(lines.first ?? "")")
            #expect(lines.dropFirst().first == "libvips " + vips.trimmingCharacters(in: .whitespacesAndNewlines))
            let ffmpeg = Self.output(of: "/usr/bin/ffmpeg", ["-version"])?.split(separator: " ").dropFirst(2).first
            let ffmpegLine = lines.dropFirst(2).first ?? ""
            #expect(ffmpegLine.hasSuffix(" (libavformat \(avformat.trimmingCharacters(in: .whitespacesAndNewlines)))"), "\(ffmpegLine)")
            if let ffmpeg { #expect(ffmpegLine.hasPrefix("FFmpeg \(ffmpeg) ")) }
        }
    }

    /// `-h` is `--help`, and a `-h` where a value stands stays a value.
    @Test func shortHelpIsHelp() throws {
        let long = try run(["--help"]), short = try run(["-h"])
        #expect(short.status == 0)
        #expect(short.output == long.output)
        #expect(long.output.contains("-V, --version"))
        let refused = try run(["--library", "-h", "--port", "notaport"])
        #expect(refused.status == 2)
        #expect(refused.error.contains("--port notaport"), "\(refused.error)")
    }

    /// The manual page (`--man`, gzipped into the package) names every option with its
    /// environment variable and default, and groff formats it without a warning.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "needs groff"))
    func theManualPageHasEveryOptionAndFormatsCleanly() throws {
        let page = try run(["--man"])
        #expect(page.status == 0)
        #expect(page.output.hasPrefix(".TH THUMBD 8 "))
        let text = try formatted(page.output)
        for flag in ["--library", "--cache-dir", "--signing-keys", "--thumbhash-backfill", "--version", "THUMBD_CACHE_DIR",
                     "Default: 8080.", "grids (config file only)", "/etc/thumbd/thumbd.json"] {
            #expect(text.contains(flag), "the manual page does not mention \(flag)")
        }
    }

    /// `page` formatted by groff as man(1) would (UTF-8, no hyphenation), failing on any warning.
    private func formatted(_ page: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/groff")
        process.arguments = ["-man", "-Tutf8", "-ww", "-rHY=0", "-rLL=400n", "-P-cbou"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
        try process.run()
        input.fileHandleForWriting.write(Data(page.utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let warnings = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && warnings.isEmpty, "groff: \(warnings)")
        // groff writes a real minus for \-; the test searches for the ASCII hyphen.
        return text.replacingOccurrences(of: "\u{2212}", with: "-").replacingOccurrences(of: "\u{2010}", with: "-")
    }
}
