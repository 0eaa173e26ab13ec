import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// A reload (SIGHUP, `Thumbd.reload`), driven in-process: what may change is in force for the
/// next request, a request in flight keeps the settings it began with, a key that takes a
/// restart is said and kept, and a configuration that does not load changes nothing.
@Suite struct ReloadTests {
    /// `printf %s carol-key | sha256sum`: 368c3387fc9b5ce6ab156ad952031f52bc9154e89a727020cd314f8910a21823.
    static let carol = ClientKey(id: "carol", sha256: Crypto.bytes(hex: "368c3387fc9b5ce6ab156ad952031f52bc9154e89a727020cd314f8910a21823")!)

    static func bearer(_ key: String) -> [(String, String)] { [("Authorization", "Bearer \(key)")] }

    /// Lines said, kept for the test.
    final class Said: @unchecked Sendable {
        let lines = LockedArray<String>()
        var say: @Sendable (String) -> Void { { [lines] in lines.append($0) } }
    }

    /// `/assets` answers 503 until the library's first scan is in.
    static func scanned(_ server: InProcessServer) -> InProcessServer {
        #expect(eventually(within: 30) { server.thumbd.service.index.completedScans > 0 })
        return server
    }

    @Test func newClientKeysAnswerTheNextRequestAndTheOldOnesNoLonger() throws {
        let server = Self.scanned(try InProcessServer { $0.clientKeys = [ClientKeyTests.alice] })
        #expect(server.respond("GET", "/assets", headers: Self.bearer("alice-phone-key")).status == 200)
        #expect(server.respond("GET", "/assets", headers: Self.bearer("carol-key")).status == 401)
        var next = server.thumbd.config
        next.clientKeys = [Self.carol]
        let said = Said()
        #expect(server.thumbd.reload(to: next, say: said.say) == ["reload: in force for the next request: client_keys"])
        #expect(said.lines.values == ["reload: in force for the next request: client_keys"])
        #expect(server.respond("GET", "/assets", headers: Self.bearer("alice-phone-key")).status == 401)
        #expect(server.respond("GET", "/assets", headers: Self.bearer("carol-key")).status == 200)
        #expect(server.thumbd.config.clientKeys == [Self.carol])
    }

    /// Keys that take a restart are named one line each, with both values, and keep theirs;
    /// the reloadable ones in the same file take effect.
    @Test func aKeyThatTakesARestartIsSaidAndKeptWhileTheOthersApply() throws {
        let server = try InProcessServer()
        let running = server.thumbd.config
        var next = running
        next.port = 9999
        next.cacheDirectory = "/var/cache/elsewhere"
        next.grids = Array(next.grids.prefix(1))
        next.corsOrigins = ["https://photos.example.com"]
        next.signingKeys = ["k1:" + String(repeating: "ab", count: 32)]
        next.memoryCacheBytes = 0   // the memory tier turned off: a restart
        let lines = server.thumbd.reload(to: next, say: { _ in })
        #expect(lines == [
            "reload: port changed from 8080 to 9999, but it takes a restart: kept 8080",
            "reload: cache_dir changed from \(running.cacheDirectory) to /var/cache/elsewhere, but it takes a restart: kept \(running.cacheDirectory)",
            "reload: memory_cache_bytes changed from 268435456 to 0, but turning the memory tier on or off (0) takes a restart: kept 268435456",
            "reload: grids changed, but they take a restart (they are in every cache key): kept as they were",
            "reload: in force for the next request: signing_keys, cors_origins",
        ])
        let now = server.thumbd.config
        #expect(now.port == 8080 && now.cacheDirectory == running.cacheDirectory && now.grids == running.grids)
        #expect(now.memoryCacheBytes == running.memoryCacheBytes)
        #expect(now.corsOrigins == ["https://photos.example.com"] && now.signingKeys == next.signingKeys)
        // Thumbnails must now be signed; CORS answers the new origin.
        #expect(server.respond("GET", "/thumbnails/5/Landscape_1.jpg").status == 403)
        let health = server.respond("GET", "/healthz", headers: [("Origin", "https://photos.example.com")])
        #expect(health.headers["Access-Control-Allow-Origin"] == "https://photos.example.com")
    }

    @Test func aConfigurationThatDoesNotLoadKeepsTheRunningOne() throws {
        let dir = TemporaryDirectory()
        let server = Self.scanned(try InProcessServer { $0.clientKeys = [ClientKeyTests.alice] })
        let running = server.thumbd.config
        // Not valid JSON.
        dir.write("thumbd.json", Array(#"{"library": "\#(Paths.fixturePhotos)", "client_keys": [}"#.utf8))
        let broken = server.thumbd.reload(arguments: ["--config", dir.path + "/thumbd.json"], environment: [:], say: { _ in })
        #expect(broken.count == 1)
        #expect(broken.first?.hasPrefix("reload: the config file \(dir.path)/thumbd.json is not valid JSON at ") == true)
        #expect(broken.first?.hasSuffix("; the running configuration is kept") == true)
        // Valid JSON, a value refused.
        var next = running
        next.corsOrigins = ["*", "https://photos.example.com"]
        next.clientKeys = [Self.carol]
        #expect(server.thumbd.reload(to: next, say: { _ in }) == [
            "reload: key 'cors_origins': '*' (any origin) stands alone, not in a list of origins; the running configuration is kept",
        ])
        // --check-config's check: a library that is not a directory.
        dir.write("gone.json", Array(#"{"library": "/definitely/not/here"}"#.utf8))
        #expect(server.thumbd.reload(arguments: ["--config", dir.path + "/gone.json"], environment: [:], say: { _ in }) == [
            "reload: library /definitely/not/here is not a directory; the running configuration is kept",
        ])
        #expect(server.thumbd.config == running)
        #expect(server.respond("GET", "/assets", headers: Self.bearer("alice-phone-key")).status == 200)
        #expect(server.respond("GET", "/assets", headers: Self.bearer("carol-key")).status == 401)
    }

    /// A reload read from the file, as SIGHUP reads it: the start's arguments again.
    @Test func theFileIsReadAgainWithTheStartsArguments() throws {
        let dir = TemporaryDirectory()
        let file = dir.path + "/thumbd.json"
        dir.write("thumbd.json", Array(#"{"library": "\#(Paths.fixturePhotos)", "access_log": "off"}"#.utf8))
        let server = try InProcessServer { $0.accessLogFile = dir.path + "/access.log" }
        dir.write("thumbd.json", Array(#"{"library": "\#(Paths.fixturePhotos)", "access_log": "combined", "trusted_proxies": ["10.0.0.0/8"], "access_log_file": "\#(dir.path)/access.log", "cache_dir": "\#(server.cache)", "library_watch": false}"#.utf8))
        #expect(server.thumbd.reload(arguments: ["--config", file], environment: [:], say: { _ in })
                == ["reload: in force for the next request: access_log, trusted_proxies"])
        let settings = server.thumbd.accessLog.current
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        #expect(settings.format == .combined && settings.trustedProxies == proxies)
    }

    /// `memory_cache_bytes` and `disk_cache_bytes` take effect at once: `/stats` shows the new limits.
    @Test func cacheLimitsTakeEffectAtOnce() throws {
        let server = try InProcessServer()
        var next = server.thumbd.config
        next.memoryCacheBytes = 1 << 20
        next.diskCacheBytes = 1 << 30
        #expect(server.thumbd.reload(to: next, say: { _ in }) == ["reload: in force for the next request: memory_cache_bytes, disk_cache_bytes"])
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(server.respond("GET", "/stats").body)) as? [String: Any])
        #expect((stats["memory_cache"] as? [String: Any])?["limit_bytes"] as? Int == 1 << 20)
        #expect((stats["disk_cache"] as? [String: Any])?["limit_bytes"] as? Int == 1 << 30)
    }

    /// A request in flight keeps the settings it read: a miss held in its render while a reload
    /// takes its origin out of `cors_origins` still gets that origin's CORS header; the next
    /// request does not.
    @Test func aRequestInFlightKeepsTheSettingsItBeganWith() throws {
        let cache = TemporaryDirectory("thumbd-reload")
        var config = Config()
        config.library = Paths.fixturePhotos
        config.cacheDirectory = cache.path + "/cache"
        config.libraryWatch = false
        config.renderWorkers = 1
        config.corsOrigins = ["https://a.example"]
        let renderer = GatedRenderer()
        let thumbd = Thumbd(config: config, resources: try Thumbd.Resources.open(config, process: ProcessSetup.prepare()),
                            renderer: renderer)
        thumbd.startServing()
        defer {
            renderer.open()
            thumbd.service.pipeline.stop()
        }
        let done = DispatchSemaphore(value: 0)
        let held = LockedArray<HTTPResponse>()
        thumbd.service.respond(to: HTTPRequest(method: "GET", target: "/thumbnails/5/Landscape_1.jpg",
                                               headers: HTTPHeaders([("Origin", "https://a.example")]))) {
            held.append($0)
            done.signal()
        }
        #expect(renderer.waitForStarts(1))
        var next = config
        next.corsOrigins = ["https://b.example"]
        #expect(thumbd.reload(to: next, say: { _ in }) == ["reload: in force for the next request: cors_origins"])
        renderer.open()
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(held.values.first?.status == 200)
        #expect(held.values.first?.headers["Access-Control-Allow-Origin"] == "https://a.example")
        let after = LockedArray<HTTPResponse>()
        thumbd.service.respond(to: HTTPRequest(method: "GET", target: "/thumbnails/5/Landscape_1.jpg",
                                               headers: HTTPHeaders([("Origin", "https://a.example")]))) {
            after.append($0)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(after.values.first?.status == 200)
        #expect(after.values.first?.headers["Access-Control-Allow-Origin"] == nil)
    }
}
