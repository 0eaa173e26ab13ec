import Foundation
import Testing
@testable import ThumbServer

/// The gallery at `/` is files in Sources/ThumbServer/Gallery/ (`GalleryPage`): the binary embeds
/// exactly those files, byte for byte; `gallery.html` refers to exactly the stylesheet and scripts
/// there; the page served is `gallery.html` with them inlined; and where `node` is installed, the
/// scripts parse as the browser gets them.
@Suite struct GalleryFilesTests {
    static let directory = Paths.packageRoot + "/Sources/ThumbServer/Gallery"

    /// The directory's page, stylesheets and scripts (not its Swift).
    static func pageFiles() -> [String] {
        Paths.files(in: directory).filter { name in [".html", ".css", ".js"].contains { name.hasSuffix($0) } }
    }

    static func read(_ name: String) throws -> String {
        try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
    }

    /// Each stylesheet `href` and script `src` in `page`, in order, found by a pattern of its own
    /// (not `GalleryPage`'s line matching), wherever it sits.
    static func references(in page: String) throws -> [String] {
        let pattern = try NSRegularExpression(pattern: #"<link rel="stylesheet" href="([^"]*)"|<script src="([^"]*)""#)
        let text = page as NSString
        return pattern.matches(in: page, range: NSRange(location: 0, length: text.length)).map { match in
            text.substring(with: match.range(at: 1).location != NSNotFound ? match.range(at: 1) : match.range(at: 2))
        }
    }

    @Test func theBinaryEmbedsTheRepositorysFilesByteForByte() throws {
        let names = Self.pageFiles()
        #expect(names.contains("gallery.html") && names.count > 2, "found only \(names) in \(Self.directory)")
        #expect(GalleryPage.files.keys.sorted() == names, """
            GalleryPage.files (and Package.swift's resources) should list every .html, .css and .js file \
            of Sources/ThumbServer/Gallery/
            """)
        for name in names {
            let onDisk = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.directory + "/" + name)))
            let same = GalleryPage.files[name] == onDisk   // (not printed: the arrays are long)
            #expect(same, "the binary's \(name) is not the repository's")
        }
    }

    @Test func thePageRefersToExactlyTheStylesheetAndScriptsThere() throws {
        let referred = try Self.references(in: Self.read("gallery.html"))
        #expect(referred.sorted() == Self.pageFiles().filter { $0 != "gallery.html" }.sorted())
        #expect(Set(referred).count == referred.count, "a file is loaded twice: \(referred)")
    }

    /// The expected page built by plain text replacement of the references' lines.
    @Test func theServedPageIsTheHTMLFileWithItsFilesInlined() throws {
        let page = try Self.read("gallery.html")
        let referred = try Self.references(in: page)
        let stylesheets = referred.filter { $0.hasSuffix(".css") }, scripts = referred.filter { $0.hasSuffix(".js") }
        var expected = page
        for name in stylesheets {
            expected = expected.replacingOccurrences(of: "<link rel=\"stylesheet\" href=\"\(name)\">\n",
                                                     with: "<style>\n" + (try Self.read(name)) + "</style>\n")
        }
        let scriptLines = scripts.map { "<script src=\"\($0)\"></script>\n" }.joined()
        #expect(expected.contains(scriptLines), "gallery.html's scripts should be one run of lines")
        expected = expected.replacingOccurrences(of: scriptLines,
                                                 with: "<script>\n" + (try scripts.map(Self.read).joined()) + "</script>\n")

        let served = try ServerHarness().get("/")
        #expect(served.status == 200)
        #expect(served.text == expected)
        #expect(try Self.references(in: served.text).isEmpty)
    }

    /// `GalleryPage.inlined` on small pages: what it makes of them, or why it refuses them.
    struct InliningCase: Sendable, CustomTestStringConvertible {
        var page: String
        var files: [String: String]
        var outcome: Result<String, GalleryPage.AssemblyError>
        var testDescription: String { page }
    }

    static let inliningCases: [InliningCase] = [
        // Runs of script lines become one script each; a stylesheet its own style element.
        InliningCase(page: "<link rel=\"stylesheet\" href=\"a.css\">\n<script src=\"a.js\"></script>\n<script src=\"b.js\"></script>\n<p>\n<script src=\"a.js\"></script>\n",
                     files: ["a.css": "p{}\n", "a.js": "a;\n", "b.js": "b;\n"],
                     outcome: .success("<style>\np{}\n</style>\n<script>\na;\nb;\n</script>\n<p>\n<script>\na;\n</script>\n")),
        // A file the page names that is not there.
        InliningCase(page: "<script src=\"a.js\"></script>\n<script src=\"b.js\"></script>\n", files: ["a.js": "a;\n"],
                     outcome: .failure(.missing("b.js"))),
        // A text that would end its element early, in any case.
        InliningCase(page: "<script src=\"a.js\"></script>\n", files: ["a.js": "s = '</SCRIPT>';\n"],
                     outcome: .failure(.closesItsElement("a.js"))),
        InliningCase(page: "<link rel=\"stylesheet\" href=\"a.css\">\n", files: ["a.css": "p::after{content:'</style>'}\n"],
                     outcome: .failure(.closesItsElement("a.css"))),
        InliningCase(page: "<script src=\"a.js\"></script>\n", files: ["a.js": "a;"], outcome: .failure(.noFinalNewline("a.js"))),
        // A reference not alone on its line as written is refused, not left for the browser to fetch.
        InliningCase(page: "<script src=\"a.js\" defer></script>\n", files: ["a.js": "a;\n"],
                     outcome: .failure(.unrecognized(line: "<script src=\"a.js\" defer></script>"))),
        InliningCase(page: "<p><link rel=\"stylesheet\" href=\"a.css\">\n", files: ["a.css": "p{}\n"],
                     outcome: .failure(.unrecognized(line: "<p><link rel=\"stylesheet\" href=\"a.css\">"))),
    ]

    @Test(arguments: inliningCases) func inlining(_ example: InliningCase) {
        let outcome = Result { () throws(GalleryPage.AssemblyError) in try GalleryPage.inlined(example.page, files: example.files) }
        #expect(outcome == example.outcome)
    }

    // MARK: - The scripts parse (node, where installed: CI does not install it; Chromium in the
    // browser tests runs them anyway)

    static let node = ["/usr/bin/node", "/usr/local/bin/node"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// `node --check` on `script` (saved as a temporary file ending in `name`): nil when it
    /// parses, else node's message.
    static func syntaxError(in script: String, named name: String) throws -> String? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try script.write(to: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(node))
        process.arguments = ["--check", file.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? nil : String(decoding: message, as: UTF8.self)
    }

    @Test(.enabled(if: node != nil, "node is not installed")) func theScriptsParseAsServedAndEachAlone() throws {
        let served = try ServerHarness().get("/").text
        let start = try #require(served.range(of: "<script>\n"))
        let end = try #require(served.range(of: "</script>", range: start.upperBound..<served.endIndex))
        let error = try Self.syntaxError(in: String(served[start.upperBound..<end.lowerBound]), named: "served.js")
        #expect(error == nil, "the served script: \(error ?? "")")
        for name in Self.pageFiles() where name.hasSuffix(".js") {
            let script = try Self.read(name)
            #expect(script.hasPrefix("//") && script.contains("\n'use strict';\n"), "\(name) should run strict, as the page does")
            let error = try Self.syntaxError(in: script, named: name)
            #expect(error == nil, "\(name): \(error ?? "")")
        }
    }
}
