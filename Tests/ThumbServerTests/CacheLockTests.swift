import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// One cache directory, one server (issue 29, item 8): a second server given a directory another
/// holds refuses to start, naming the holder; and a start that fails makes nothing on disk.
@Suite struct CacheLockTests {
    /// A second server on a running server's cache directory, in this process and as the
    /// executable, is refused with one sentence naming this process (its PID, written into
    /// `thumbd.lock`), and changes nothing there; once the first has stopped, it starts.
    @Test func aSecondServerOnTheSameCacheDirectoryIsRefusedNamingTheHolder() throws {
        let root = TemporaryDirectory("thumbd-lock")
        let cache = root.path + "/cache"
        // No backfill, the index scanned and the render stored: the first server then writes no
        // new name into the directory by itself while the others are refused.
        let first = try ServerHarness(cacheDirectory: cache) { $0.thumbhashBackfill = false }
        first.waitForInitialScan()
        #expect(try first.get("/thumbnails/5/Landscape_1.jpg").status == 200)
        #expect(eventually { (try? first.stat("disk_cache", "entries")) == 1 })
        let lockText = try String(contentsOfFile: cache + "/thumbd.lock", encoding: .utf8)
        #expect(lockText == "\(getpid())\n")
        let before = try FileManager.default.subpathsOfDirectory(atPath: cache).sorted()

        var config = first.config
        config.port = 0
        #expect {
            _ = try Thumbd(config: config, process: ProcessSetup.prepare(), listening: true)
        } throws: { error in
            let message = (error as? ConfigError)?.description ?? ""
            return message.hasPrefix("cache_dir \(cache) is in use by another thumbd (process \(getpid()), ")
                && message.hasSuffix("holding \(cache)/thumbd.lock); give each server a cache directory of its own")
        }
        let executable = try ExecutableTests().run(["--library", first.library, "--cache-dir", cache, "--port", "0"])
        #expect(executable.status == 2)
        #expect(executable.error.contains("thumbd: cache_dir \(cache) is in use by another thumbd (process \(getpid())"),
                "\(executable.error)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: cache).sorted() == before)
        #expect(try first.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "HIT-MEMORY")

        first.stop()
        let second = try ServerHarness(cacheDirectory: cache)
        #expect(try second.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
    }

    /// A start that fails — the port taken, the library missing, a value out of range — exits 2
    /// and leaves no cache directory (nor the parents it would have made) behind.
    @Test(arguments: [
        (["--port", "TAKEN"], "cannot listen on 127.0.0.1:TAKEN"),
        (["--library", "/nonexistent/photos"], "the library /nonexistent/photos is not a readable directory"),
        (["--quality", "101"], "--quality 101 is not a valid integer"),
    ])
    func aStartThatFailsMakesNothingOnDisk(flags: [String], message: String) throws {
        let root = TemporaryDirectory("thumbd-nothing")
        let taken = try HTTPListener(host: "127.0.0.1", port: 0)
        let cache = root.path + "/made/by/start/cache"
        let arguments = (["--library", Paths.fixturePhotos, "--port", "0", "--cache-dir", cache] + flags)
            .map { $0 == "TAKEN" ? String(taken.port) : $0 }
        let run = try ExecutableTests().run(arguments)
        #expect(run.status == 2)
        #expect(run.error.contains(message.replacingOccurrences(of: "TAKEN", with: String(taken.port))), "\(run.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }
}
