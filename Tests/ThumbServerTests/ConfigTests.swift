import Foundation
import Testing
@testable import ThumbServer

/// Config precedence and validation (README "Configuration").
@Suite struct ConfigTests {
    func load(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Config {
        guard case .run(let config) = try ConfigLoader.load(arguments: arguments, environment: environment) else {
            throw ConfigError("expected a config")
        }
        return config
    }

    @Test func theShippedConfigFileSaysWhatTheDefaultsSay() throws {
        let config = try load(["--config", Paths.packageRoot + "/config/thumbd.json", "--library", "/photos"])
        var expected = Config()
        expected.library = "/photos"
        #expect(config == expected)
    }

    @Test func flagsBeatEnvironmentBeatFile() throws {
        let file = NSTemporaryDirectory() + "thumbd-config-\(UUID().uuidString).json"
        try Data(#"{"port": 1, "quality": 50, "webp": false, "render_workers": 0, "grids": [{"name": "s", "width": 100, "height": 50, "fit": "cover"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = try load(["--config", file, "--library", "/p", "--port=3", "--access-log"],
                              ["THUMBD_PORT": "2", "THUMBD_QUALITY": "60", "THUMBD_CACHE_DIR": "/c"])
        #expect(config.port == 3)
        #expect(config.quality == 60)
        #expect(config.cacheDirectory == "/c")
        #expect(config.webp == false)
        #expect(config.accessLog == true)
        #expect(config.grids.map(\.name) == ["s"])
        #expect(config.grids.first?.height == 50)
    }

    @Test func booleanFlagsTakeEveryUsualSpelling() throws {
        #expect(try load(["--library", "/p", "--webp", "false"]).webp == false)
        #expect(try load(["--library", "/p", "--no-webp"]).webp == false)
        #expect(try load(["--library", "/p", "--webp=no", "--access-log", "true"]).accessLog == true)
        #expect(try load(["--access-log", "--library", "/p"]).accessLog == true)
        #expect(try load(["--library", "/p", "--webp=no"]).webp == false)
    }

    @Test(arguments: [(["--library", "/p", "--port", "x"], "--port"), (["--library", "/p", "--nope", "1"], "--nope"),
                      (["stray"], "stray"), (["--library", "/p", "--quality", "0"], "--quality")])
    func badFlagsNameTheFlag(arguments: [String], culprit: String) {
        #expect { try ConfigLoader.load(arguments: arguments, environment: [:]) } throws: { error in
            (error as? ConfigError)?.description.contains(culprit) == true
        }
    }

    /// A library path given as bytes that are not UTF-8 arrives with U+FFFD in their place;
    /// the error says so instead of only "not a readable directory" (found by a fresh-eyes session).
    @Test func aLibraryPathThatIsNotUTF8IsNamedAsSuch() {
        var config = Config()
        config.library = NSTemporaryDirectory() + "lib\u{FFFD}"
        config.cacheDirectory = NSTemporaryDirectory() + "thumbd-cache-\(UUID().uuidString)"
        #expect { _ = try Thumbd(config: config) } throws: { error in
            (error as? ConfigError)?.description.contains("is not a readable directory (its path is not valid UTF-8") == true
        }
    }

    @Test func anOutOfRangeNumberSaysTheRange() {
        #expect { try ConfigLoader.load(arguments: ["--library", "/p", "--port", "70000"], environment: [:]) } throws: { error in
            (error as? ConfigError)?.description.contains("--port 70000 is not a valid integer from 0 to 65535 for port") == true
        }
    }

    @Test(arguments: [#"{"port": true}"#, #"{"port": 1.5}"#, #"{"webp": 1}"#, #"{"grids": []}"#,
                      #"{"grids": [{"name": "a", "width": 0, "height": 1, "fit": "cover"}]}"#,
                      #"{"grids": [{"name": "a", "width": 1, "height": 1, "fit": "stretch"}]}"#, #"[1]"#])
    func badFilesAreRefused(json: String) throws {
        let file = NSTemporaryDirectory() + "thumbd-bad-\(UUID().uuidString).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(throws: ConfigError.self) { try ConfigLoader.load(arguments: ["--config", file, "--library", "/p"], environment: [:]) }
    }
}
