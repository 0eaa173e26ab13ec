import Foundation
import Rendering
import TestSupport
import ThumbServer
import ThumbdClient

/// A real thumbd on 127.0.0.1 with an ephemeral port, in this process (as ThumbServerTests'
/// `ServerHarness`), over its own cache directory; the library watch off (each is an inotify
/// instance, and a test that changes the library rescans).
final class TestServer: @unchecked Sendable {
    let library: String
    let cacheDirectory = NSTemporaryDirectory() + "thumbd-client-cache-\(UUID().uuidString)"
    let thumbd: Thumbd
    let port: UInt16

    /// `renderer`: libvips unless a test gives a stand-in (`GatedRenderer`), which also turns
    /// the placeholder backfill off (its renders are the test's to count).
    init(library: String, renderer: any ThumbnailRendering = Renderer(), configure: (inout Config) -> Void = { _ in }) throws {
        self.library = library
        var config = Config()
        config.library = library
        config.port = 0
        config.cacheDirectory = cacheDirectory
        config.shutdownGraceSeconds = 2
        // No backfill nor previews: a placeholder arriving mid-test changes the listing (its
        // generation, a change the client reports) and a backfill render is one the gated
        // renderer would count.
        config.thumbhashBackfill = false
        config.thumbhashPreviews = false
        config.libraryWatch = false
        configure(&config)
        thumbd = try Thumbd(config: config, process: ProcessSetup.prepare(), renderer: renderer)
        port = try thumbd.start()
        let deadline = Date().addingTimeInterval(10)
        while thumbd.service.index.completedScans == 0 && Date() < deadline { usleep(5_000) }
    }

    deinit {
        let done = DispatchSemaphore(value: 0)
        thumbd.shutdown { done.signal() }
        _ = done.wait(timeout: .now() + 10)
        try? FileManager.default.removeItem(atPath: cacheDirectory)
    }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    /// A library object of this server.
    func client(clientKey: String? = nil, clientID: String? = nil) -> ThumbdLibrary {
        ThumbdLibrary(baseURL: baseURL, clientKey: clientKey, clientID: clientID)
    }

    /// The index looks at the library again (the watch is off): changes the test made are listed.
    func rescan() { _ = thumbd.service.index.rescan() }
}

/// Real photos for the tests: the shared corpus' (`../shared/corpus`, or `$THUMBD_CORPUS`) when
/// present, else the project's fixtures.
enum Photos {
    static let packageRoot = Fixtures.packageRoot
    static let corpus = Fixtures.corpus

    /// A corpus photo's path (`photos/…`), or the fixture of the same role when there is no corpus.
    static func path(_ corpusName: String, fixture: String) -> String {
        if let corpus, FileManager.default.fileExists(atPath: corpus + "/" + corpusName) { return corpus + "/" + corpusName }
        return packageRoot + "/Tests/Fixtures/photos/" + fixture
    }

    /// A temporary library of `files` (name in the library → source path), each file's
    /// modification time `modified` seconds after 2020-01-01 when given.
    static func library(_ files: [(String, String)]) throws -> TemporaryDirectory {
        let root = TemporaryDirectory("thumbd-client")
        for (name, source) in files { try add(name, from: source, to: root) }
        return root
    }

    static func add(_ name: String, from source: String, to root: TemporaryDirectory, modified: Date? = nil) throws {
        root.write(name, Array(try Data(contentsOf: URL(fileURLWithPath: source))))
        if let modified {
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: root.path + "/" + name)
        }
    }
}

/// Waits, without sleeping a fixed time, until `condition` holds (asked every 10 ms, at most
/// `seconds`); the last answer decides.
func eventually(within seconds: Double = 10, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// Runs a blocking wait (a `GatedRenderer`'s) on a Dispatch thread, so that it holds none of the
/// cooperative pool's threads (two on two cores): the task it waits for needs one to send its
/// request, and in a full run the other is often held by a synchronous test.
func offThePool<T: Sendable>(_ wait: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: wait()) }
    }
}
