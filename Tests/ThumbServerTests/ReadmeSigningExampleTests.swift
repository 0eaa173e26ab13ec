import Foundation
import Testing
@testable import ThumbServer

/// The signing examples of docs/deploying.md ("Signed thumbnail URLs") run as they are printed:
/// each must give the test vector's signatures (Tests/Fixtures/signing, made by Python's `hmac`)
/// and a URL a signed server serves. Python always; Node where `node` is installed.
@Suite struct ReadmeSigningExampleTests {
    /// The fenced block after `<!-- signing example: NAME -->` in docs/deploying.md.
    static func example(_ name: String) throws -> String {
        let readme = try String(contentsOfFile: Paths.packageRoot + "/docs/deploying.md", encoding: .utf8)
        let marker = try #require(readme.range(of: "<!-- signing example: \(name) -->\n```"))
        let afterFence = try #require(readme[marker.upperBound...].firstIndex(of: "\n"))
        let end = try #require(readme[afterFence...].range(of: "\n```"))
        return String(readme[readme.index(after: afterFence)..<end.lowerBound])
    }

    /// Runs `program` with `arguments`; its stdout, or nil when it failed.
    static func run(_ program: String, _ arguments: [String]) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    static let nodeInstalled = ["/usr/bin/node", "/usr/local/bin/node"].contains { FileManager.default.isExecutableFile(atPath: $0) }

    /// The URLs `sign(grid, path, exp)` calls of the example should print: the vector's, then a
    /// fixture photo's signed for the next ten minutes.
    static func check(printed: String?, photoExpires: Int, server: ServerHarness) throws {
        let vector = try URLSigningTests.vector()
        let lines = try #require(printed).split(separator: "\n").map(String.init)
        try #require(lines.count == 3)
        // The vector's first and third cases (ASCII; NFD folder and escapes), in the URL form the
        // example builds.
        #expect(lines[0] == "/thumbnails/3/cameras/nikon-d40.jpg?exp=\(vector.expires)&kid=\(vector.keyID)&sig=\(vector.cases[0].sig)")
        #expect(lines[1] == "/thumbnails/5/\(vector.cases[2].urlPath)?exp=\(vector.expires)&kid=\(vector.keyID)&sig=\(vector.cases[2].sig)")
        let served = try server.get(lines[2])
        #expect(served.status == 200 && served.image?.width == 393 && served.image?.height == 393)
        #expect(lines[2].contains("exp=\(photoExpires)&"))
    }

    static func server() throws -> ServerHarness {
        try ServerHarness { $0.signingKeys = ["2026-12:" + String(repeating: "4f2a", count: 16)] }
    }

    @Test func thePythonExampleSignsAsThumbdChecks() throws {
        let server = try Self.server()
        let expires = Int(Date().timeIntervalSince1970) + 600
        let program = try Self.example("python") + """

            secret = "4f2a" * 16
            print(signed_url("3", "cameras/nikon-d40.jpg", "2026-12", secret, 1796198400))
            print(signed_url("5", "cafe\\u0301/caf\\u00e9 #1 100%.jpg", "2026-12", secret, 1796198400))
            print(signed_url("3", "Landscape_1.jpg", "2026-12", secret, \(expires)))
            """
        try Self.check(printed: try Self.run("python3", ["-c", program]), photoExpires: expires, server: server)
    }

    @Test(.enabled(if: nodeInstalled, "node is not installed")) func theNodeExampleSignsAsThumbdChecks() throws {
        let server = try Self.server()
        let expires = Int(Date().timeIntervalSince1970) + 600
        let program = try Self.example("node") + """

            const secret = '4f2a'.repeat(16);
            console.log(signedUrl('3', 'cameras/nikon-d40.jpg', '2026-12', secret, 1796198400));
            console.log(signedUrl('5', 'cafe\\u0301/caf\\u00e9 #1 100%.jpg', '2026-12', secret, 1796198400));
            console.log(signedUrl('3', 'Landscape_1.jpg', '2026-12', secret, \(expires)));
            """
        try Self.check(printed: try Self.run("node", ["-e", program]), photoExpires: expires, server: server)
    }
}
