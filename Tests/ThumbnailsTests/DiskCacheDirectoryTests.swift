import Foundation
import Rendering
import Synchronization
import Testing
import TestSupport
@testable import Thumbnails

/// The cache's directories removed under a running server (a tmp cleaner, `rm -rf` of the
/// cache): made again by the start-up rules, the write retried, the index cleared of what is
/// gone, the fault counted and said once; never made where the start-up rules would refuse.
@Suite struct DiskCacheDirectoryTests {
    func key(_ name: String) -> CacheKey {
        CacheKey(assetPath: name, source: SourceIdentity(size: 10, modifiedNanoseconds: 1),
                 spec: GridSpec.defaults[1], format: .automatic, quality: 80)
    }

    func thumbnail(_ size: Int) -> Thumbnail {
        Thumbnail(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0) }, format: .png, width: 33, height: 44)
    }

    /// What the cache said through `warn`.
    final class Warnings: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func isTaggedByThumbd(_ directory: String) -> Bool {
        let tag = FileManager.default.contents(atPath: directory + "/CACHEDIR.TAG").map { String(decoding: $0, as: UTF8.self) }
        return tag?.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55\n") == true
            && tag?.contains("created by thumbd") == true
    }

    @Test func entriesAndTmpRemovedAreMadeAgainAndTheWriteRetried() throws {
        let dir = TemporaryDirectory()
        let warnings = Warnings()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20, warn: warnings.sink)
        #expect(cache.write(thumbnail(5000), for: key("a")))
        #expect(cache.write(thumbnail(5000), for: key("b")))
        try FileManager.default.removeItem(atPath: dir.path + "/entries")
        try FileManager.default.removeItem(atPath: dir.path + "/tmp")
        #expect(cache.store(thumbnail(100), for: key("c")) == .written)
        #expect(cache.read(key("c"))?.bytes == thumbnail(100).bytes)
        let stats = cache.statistics
        #expect(stats.entries == 1)      // a and b are gone with entries/: no longer counted
        #expect(stats.bytes == 4096)
        #expect(stats.writeErrors == 0)
        #expect(stats.directoryFaults == 1)
        #expect(stats.fault == nil)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.contains("\(dir.path)/entries was removed, \(dir.path)/tmp was removed") == true)
        #expect(warnings.all.first?.contains("2 entries were gone") == true)
        // Mended: the next writes and checks change nothing and say nothing.
        #expect(cache.write(thumbnail(100), for: key("d")))
        #expect(cache.checkDirectories() == nil)
        #expect(cache.statistics.directoryFaults == 1)
        #expect(warnings.all.count == 1)
    }

    @Test func aRemovedCacheDirectoryIsMadeAgainWithItsTagAndKeptAcrossARestart() throws {
        let parent = TemporaryDirectory()
        let path = parent.path + "/cache"
        let cache = try DiskCache(directory: path, limitBytes: 1 << 20, warn: Warnings().sink)
        #expect(cache.write(thumbnail(5000), for: key("a")))
        try FileManager.default.removeItem(atPath: path)
        #expect(cache.write(thumbnail(3000), for: key("b")))
        #expect(isTaggedByThumbd(path))
        #expect(cache.statistics.entries == 1)
        #expect(cache.statistics.directoryFaults == 1)
        let reopened = try DiskCache(directory: path, limitBytes: 1 << 20)
        #expect(reopened.read(key("b"))?.bytes == thumbnail(3000).bytes)
        #expect(reopened.read(key("a")) == nil)
    }

    /// With the memory tier on, no disk read or write may come for a while: a check alone
    /// (as `/stats` makes) drops the entries that are gone.
    @Test func aCheckDropsEntriesThatAreGoneWithoutAWrite() throws {
        let dir = TemporaryDirectory()
        let warnings = Warnings()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20, warn: warnings.sink)
        for name in ["a", "b", "c"] { #expect(cache.write(thumbnail(5000), for: key(name))) }
        #expect(cache.statistics.entries == 3)
        try FileManager.default.removeItem(atPath: dir.path + "/entries")
        #expect(cache.checkDirectories() == nil)
        #expect(exists(dir.path + "/entries"))
        #expect(cache.statistics.entries == 0)
        #expect(cache.statistics.bytes == 0)
        #expect(!cache.contains(key("a")))
        #expect(cache.statistics.directoryFaults == 1)
        #expect(warnings.all.count == 1)
    }

    @Test func entriesEmptiedUnderTheServerAreNotCountedAfterACheck() throws {
        // `rm -rf entries/*`: entries/ stays, its shards and files go.
        let dir = TemporaryDirectory()
        let warnings = Warnings()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20, warn: warnings.sink)
        for name in ["a", "b", "c"] { #expect(cache.write(thumbnail(5000), for: key(name))) }
        #expect(cache.checkDirectoriesAndShards() == nil)   // the shards as they are now
        #expect(cache.statistics.entries == 3)
        for shard in try FileManager.default.contentsOfDirectory(atPath: dir.path + "/entries") {
            try FileManager.default.removeItem(atPath: dir.path + "/entries/" + shard)
        }
        #expect(cache.checkDirectories() == nil)
        #expect(cache.statistics.entries == 3)   // the three directories are as claimed: unseen
        #expect(cache.checkDirectoriesAndShards() == nil)
        #expect(cache.statistics.entries == 0)
        #expect(cache.statistics.bytes == 0)
        #expect(!cache.contains(key("a")))
        #expect(warnings.all == ["disk cache: 3 entries were removed from \(dir.path)/entries while the server ran"])
        // Written again, kept and counted.
        #expect(cache.write(thumbnail(5000), for: key("a")))
        #expect(cache.checkDirectoriesAndShards() == nil)
        #expect(cache.statistics.entries == 1)
    }

    /// Emptied and made again by someone else (`rm -rf cache && mkdir cache`): adopted as at
    /// first start (an empty directory), and tagged.
    @Test func aDirectoryReplacedByAnEmptyOneIsClaimedAsAtFirstStart() throws {
        let parent = TemporaryDirectory()
        let path = parent.path + "/cache"
        let cache = try DiskCache(directory: path, limitBytes: 1 << 20, warn: Warnings().sink)
        #expect(cache.write(thumbnail(5000), for: key("a")))
        try FileManager.default.removeItem(atPath: path)
        #expect(mkdir(path, 0o755) == 0)
        #expect(cache.checkDirectories() == nil)
        #expect(isTaggedByThumbd(path))
        #expect(cache.statistics.entries == 0)
        #expect(cache.write(thumbnail(5000), for: key("b")))
    }

    @Test func aCacheWhoseParentIsGoneIsNotMadeUntilTheParentIsBack() throws {
        let top = TemporaryDirectory()
        let parent = top.path + "/parent"
        let path = parent + "/cache"
        let warnings = Warnings()
        let cache = try DiskCache(directory: path, limitBytes: 1 << 20, faultRecheckSeconds: 0, warn: warnings.sink)
        #expect(cache.write(thumbnail(5000), for: key("a")))
        try FileManager.default.removeItem(atPath: parent)
        guard case .failed(let why) = cache.store(thumbnail(100), for: key("b")) else {
            Issue.record("a write with nowhere to go must fail")
            return
        }
        #expect(why.contains("the directory that held the cache directory \(path) is gone too"))
        #expect(!exists(parent))   // never a chain of parents
        #expect(!cache.write(thumbnail(100), for: key("c")))
        var stats = cache.statistics
        #expect(stats.writeErrors == 2)
        #expect(stats.entries == 0)
        #expect(stats.directoryFaults == 1)
        #expect(stats.fault == why)
        #expect(cache.checkDirectories() == why)
        #expect(warnings.all.count == 1)   // said once, however many writes fail
        // The parent is back: the next write makes the cache again, and says so.
        #expect(mkdir(parent, 0o755) == 0)
        #expect(cache.write(thumbnail(100), for: key("d")))
        #expect(isTaggedByThumbd(path))
        stats = cache.statistics
        #expect(stats.fault == nil)
        #expect(stats.directoryFaults == 1)
        #expect(stats.entries == 1)
        #expect(warnings.all.count == 2)
        #expect(warnings.all.last?.contains("\(path) is usable again") == true)
    }

    /// A cache at `parent/cache` (a write's recheck interval an hour) whose `parent` was then
    /// removed: `top` holds the temporary directory for as long as the caller keeps it.
    func cacheWhoseParentIsGone() throws -> (top: TemporaryDirectory, parent: String, cache: DiskCache) {
        let top = TemporaryDirectory()
        let parent = top.path + "/parent"
        let cache = try DiskCache(directory: parent + "/cache", limitBytes: 1 << 20, faultRecheckSeconds: 3600,
                                  warn: Warnings().sink)
        try FileManager.default.removeItem(atPath: parent)
        return (top, parent, cache)
    }

    /// While it cannot be made again, a write tries again at most once per recheck interval.
    @Test func whileFailingWritesTryAgainAtMostOncePerInterval() throws {
        let (top, parent, cache) = try cacheWhoseParentIsGone()
        defer { withExtendedLifetime(top) {} }
        #expect(!cache.write(thumbnail(100), for: key("a")))
        #expect(mkdir(parent, 0o755) == 0)
        #expect(!cache.write(thumbnail(100), for: key("b")))   // within the interval: not tried
        #expect(!exists(parent + "/cache"))
    }

    /// `/healthz`, `/stats` and a prefetch's start (`checkDirectoriesAndShards`) claim the cache
    /// again at each call, whatever the writes' interval, so their answer follows a mend at once
    /// (found by an operator: `/healthz` stayed 503 for up to a second, the writes' interval).
    @Test func aHealthCheckFollowsAMendAtOnce() throws {
        let (top, parent, cache) = try cacheWhoseParentIsGone()
        defer { withExtendedLifetime(top) {} }
        let why = try #require(cache.checkDirectoriesAndShards())
        #expect(why.contains("the directory that held the cache directory \(parent)/cache is gone too"))
        #expect(mkdir(parent, 0o755) == 0)
        #expect(cache.checkDirectories() == why)   // a write's check, within its interval: not tried
        #expect(!exists(parent + "/cache"))
        #expect(cache.checkDirectoriesAndShards() == nil)
        #expect(cache.statistics.fault == nil)
        #expect(isTaggedByThumbd(parent + "/cache"))
        #expect(cache.write(thumbnail(100), for: key("a")))
    }

    /// A path through a symlink that now leads into the library: the cache is not made there.
    @Test func aCacheThatWouldNowLieInsideTheLibraryIsNotMadeThere() throws {
        let top = TemporaryDirectory()
        let library = top.path + "/library", elsewhere = top.path + "/elsewhere"
        for directory in [library, elsewhere] { #expect(mkdir(directory, 0o755) == 0) }
        #expect(symlink(elsewhere, top.path + "/link") == 0)
        let path = top.path + "/link/cache"
        let cache = try DiskCache(directory: path, limitBytes: 1 << 20, library: CacheDirectory.resolve(library),
                                  warn: Warnings().sink)
        try FileManager.default.removeItem(atPath: elsewhere + "/cache")
        #expect(unlink(top.path + "/link") == 0)
        #expect(symlink(library, top.path + "/link") == 0)
        guard case .failed(let why) = cache.store(thumbnail(100), for: key("a")) else {
            Issue.record("a cache that would lie inside the library must not be made")
            return
        }
        #expect(why.contains("is inside the library"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: library).isEmpty)
    }

    /// Files of someone else's at the cache's path: never adopted, never written to, left as they are.
    @Test func aDirectoryOfSomeoneElsesAtThePathIsNotAdopted() throws {
        let parent = TemporaryDirectory()
        let path = parent.path + "/cache"
        let cache = try DiskCache(directory: path, limitBytes: 1 << 20, warn: Warnings().sink)
        #expect(cache.write(thumbnail(5000), for: key("a")))
        try FileManager.default.removeItem(atPath: path)
        parent.write("cache/holiday.jpg", Array(Fixtures.photo("Landscape_1.jpg")))
        #expect(mkdir(path + "/entries", 0o755) == 0)
        #expect(!cache.write(thumbnail(100), for: key("b")))
        #expect(cache.statistics.fault?.contains("holds files thumbd did not create") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == ["entries", "holiday.jpg"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + "/entries").isEmpty)
        #expect(FileManager.default.contents(atPath: path + "/holiday.jpg") == Fixtures.photo("Landscape_1.jpg"))
    }
}
