import Foundation
import Testing

/// The `thumbd` executable as a user runs it: flags, config errors, signals, restart.
@Suite struct ExecutableTests {
    static let binary: String = {
        for configuration in ["debug", "release"] {
            let path = Paths.packageRoot + "/.build/\(configuration)/thumbd"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return Paths.packageRoot + "/.build/debug/thumbd"
    }()

    struct Run {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs thumbd to completion (it must exit by itself).
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: NSTemporaryDirectory())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
                   error: String(decoding: error, as: UTF8.self))
    }

    @Test func helpListsEveryOptionWithItsDefault() throws {
        let help = try run(["--help"])
        #expect(help.status == 0)
        for flag in ["--library", "--port", "--host", "--cache-dir", "--config", "--memory-cache-bytes",
                     "--disk-cache-bytes", "--quality", "--render-workers", "--access-log"] {
            #expect(help.output.contains(flag), "--help does not mention \(flag)")
        }
        #expect(help.output.contains("default 8080"))
        #expect(help.output.contains("default 268435456"))
        #expect(help.output.contains("THUMBD_PORT"))
    }

    @Test func badStartUpsStopWithOneSentenceNamingTheCulprit() throws {
        let noLibrary = try run([])
        #expect(noLibrary.status == 2)
        #expect(noLibrary.error.contains("--library"))
        let missing = try run(["--library", "/definitely/not/here"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("/definitely/not/here"))
        let badPort = try run(["--library", Paths.fixturePhotos, "--port", "70000"])
        #expect(badPort.status == 2)
        #expect(badPort.error.contains("--port"))
        let badEnv = try run(["--library", Paths.fixturePhotos], environment: ["THUMBD_QUALITY": "high"])
        #expect(badEnv.status == 2)
        #expect(badEnv.error.contains("THUMBD_QUALITY"))
        let config = NSTemporaryDirectory() + "thumbd-bad-\(UUID().uuidString).json"
        try Data(#"{"port": 8080, "colour": "blue"}"#.utf8).write(to: URL(fileURLWithPath: config))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let badKey = try run(["--config", config, "--library", Paths.fixturePhotos])
        #expect(badKey.status == 2)
        #expect(badKey.error.contains("colour"))
        #expect(badKey.error.split(separator: "\n").count == 1)
    }

    @Test func servesAndStopsCleanlyOnSIGTERM() throws {
        let cache = NSTemporaryDirectory() + "thumbd-exe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: cache) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--library", Paths.fixturePhotos, "--port", "0", "--cache-dir", cache]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // The first line names the bound port: "... on http://127.0.0.1:PORT/ ...".
        var line = ""
        while !line.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            line += String(decoding: data, as: UTF8.self)
        }
        let afterHost = line.components(separatedBy: "127.0.0.1:").dropFirst().first ?? ""
        let port = try #require(UInt16(afterHost.prefix { $0.isNumber }), "no port in \(line)")
        let response = try TestClient.get(port: port, "/thumbnails/3/Landscape_1.jpg")
        #expect(response.status == 200)
        #expect(response.image == ImageHeader(format: "jpeg", width: 393, height: 393))
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }
}
