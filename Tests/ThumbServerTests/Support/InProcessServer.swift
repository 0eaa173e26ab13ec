import Dispatch
import Foundation
import HTTP
@testable import Library
import TestSupport
@testable import ThumbServer

/// A whole thumbd wired and started as `thumbd` runs it (`startServing`) but listening on no
/// socket: each request goes through the router (`ThumbService.respond`). The library watch is
/// off (an inotify instance a route test does not need: Debian lets a user hold 128) unless
/// `configure` turns it on. Route tests subclass it to name their own set-up.
class InProcessServer: @unchecked Sendable {
    /// The cache directory, removed with the server.
    let cache: String
    let thumbd: Thumbd

    /// A server over `library` (the fixture photos by default), its config changed by
    /// `configure`; its cache at `cacheDirectory` (a fresh temporary directory by default).
    init(library: String = Paths.fixturePhotos, cacheDirectory: String? = nil,
         configure: (inout Config) -> Void = { _ in }) throws {
        cache = cacheDirectory ?? NSTemporaryDirectory() + "thumbd-inprocess-\(UUID().uuidString)"
        var config = Config()
        config.library = library
        config.cacheDirectory = cache
        config.libraryWatch = false
        configure(&config)
        thumbd = try Thumbd(config: config, process: ProcessSetup.prepare())
        thumbd.startServing()
    }

    deinit {
        thumbd.service.pipeline.stop()
        try? FileManager.default.removeItem(atPath: cache)
    }

    /// Publishes at once the placeholders that arrived, as `ServerHarness.publishPlaceholders`.
    func publishPlaceholders() { thumbd.service.index.publishArrivedPlaceholders() }

    /// Sends one request through the router and waits for its response (a file body read in).
    func respond(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> HTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let box = LockedArray<HTTPResponse>()
        thumbd.service.respond(to: HTTPRequest(method: method, target: target, headers: HTTPHeaders(headers), body: body)) {
            box.append($0.withFileRead)
            done.signal()
        }
        done.wait()
        return box.values[0]
    }
}
