import Foundation
import HTTP
@testable import Library
import Rendering
import TestSupport
import ThumbServer
import Thumbnails

/// A real thumbd on 127.0.0.1 with an ephemeral port, its own cache directory and library.
/// `restart()` builds a new server over the same cache directory, as a process restart would.
final class ServerHarness: @unchecked Sendable {
    let library: String
    let cacheDirectory: String
    private(set) var config: Config
    private(set) var thumbd: Thumbd
    private(set) var port: UInt16
    private let ownsCache: Bool
    private let renderer: any ThumbnailRendering

    /// `renderer`: libvips unless a test gives a stand-in (`GatedRenderer`).
    init(library: String = Paths.fixturePhotos, cacheDirectory: String? = nil,
         renderer: any ThumbnailRendering = Renderer(), configure: (inout Config) -> Void = { _ in }) throws {
        self.renderer = renderer
        self.library = library
        ownsCache = cacheDirectory == nil
        self.cacheDirectory = cacheDirectory ?? NSTemporaryDirectory() + "thumbd-cache-\(UUID().uuidString)"
        var config = Config()
        config.library = library
        config.port = 0
        config.cacheDirectory = self.cacheDirectory
        config.shutdownGraceSeconds = 2
        // The placeholder backfill renders through the server's renderer: a stand-in's renders
        // are the test's to count and hold, so it runs only where a test turns it on.
        config.thumbhashBackfill = renderer is Renderer
        // Each watch is an inotify instance, of which Debian lets a user hold 128
        // (fs.inotify.max_user_instances) across all processes: a full run in parallel held
        // about 117, and a test whose watch got none failed. Tests of the watch turn it on.
        config.libraryWatch = false
        configure(&config)
        self.config = config
        thumbd = try Thumbd(config: config, process: ProcessSetup.prepare(), renderer: renderer, listening: true)
        port = try thumbd.start()
    }

    deinit {
        stop()
        if ownsCache { try? FileManager.default.removeItem(atPath: cacheDirectory) }
    }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        thumbd.shutdown { done.signal() }
        _ = done.wait(timeout: .now() + 10)
    }

    func restart() throws {
        stop()
        thumbd = try Thumbd(config: config, process: ProcessSetup.prepare(), renderer: renderer, listening: true)
        port = try thumbd.start()
    }

    func get(_ target: String, headers: [String: String] = [:], method: String = "GET") throws -> TestResponse {
        try TestClient.get(port: port, target, method: method, headers: headers)
    }

    /// `POST target` with the JSON `body` and `headers`.
    func post(_ target: String, _ body: String, headers: [String: String] = [:]) throws -> TestResponse {
        var request = "POST \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        request += "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        return try TestClient.parse(TestClient.exchange(port: port, Array(request.utf8)))
    }

    /// Waits for the library index's first scan (started in the background at start-up), so a
    /// test's own `rescan()` calls see only the changes the test makes.
    func waitForInitialScan() {
        let deadline = Date().addingTimeInterval(10)
        while thumbd.service.index.completedScans == 0 && Date() < deadline { usleep(5_000) }
    }

    /// Publishes at once the placeholders that arrived (made by a render, a preview, the backfill,
    /// a peer, or taken away), which the server publishes 50 ms after the first
    /// (`LibraryIndex.publishArrivedPlaceholders`): a test that reads a listing's `thumbhash`
    /// after one arrived calls this, rather than waiting out the 50 ms.
    func publishPlaceholders() { thumbd.service.index.publishArrivedPlaceholders() }

    /// `/stats` as JSON.
    func stats() throws -> [String: Any] { try get("/stats").json }

    func stat(_ section: String, _ field: String) throws -> Int {
        ((try stats()[section] as? [String: Any])?[field] as? NSNumber)?.intValue ?? -1
    }
}

/// Percent-encodes every byte outside RFC 3986's unreserved set, per path segment.
func encodePath(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
        segment.utf8.map { byte -> String in
            let c = Character(Unicode.Scalar(byte))
            if byte < 128 && (c.isLetter || c.isNumber || "-._~".contains(c)) { return String(c) }
            return String(format: "%%%02X", byte)
        }.joined()
    }.joined(separator: "/")
}

extension Config {
    /// No placeholder backfill nor previews: each placeholder made moves the listing's
    /// generation, which tests that count generations must make themselves.
    mutating func makeNoPlaceholders() {
        thumbhashBackfill = false
        thumbhashPreviews = false
    }
}
