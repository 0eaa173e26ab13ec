import Foundation
import Rendering
import Testing
import TestSupport
@testable import Thumbnails

@Suite struct DiskCacheTests {
    func key(_ name: String, mtime: Int64 = 1) -> CacheKey {
        CacheKey(assetPath: name, source: SourceIdentity(size: 10, modifiedNanoseconds: mtime),
                 spec: GridSpec.defaults[1], format: .automatic, quality: 80)
    }

    func thumbnail(_ size: Int, fill: UInt8 = 9) -> Thumbnail {
        Thumbnail(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0) ^ fill }, format: .png, width: 33, height: 44)
    }

    /// Bytes the entry files occupy, counted in 4 KiB blocks like `du`.
    func bytesOnDisk(_ directory: String) -> Int { DiskUsage.bytes(under: [directory]) }

    @Test func roundTripsAndSurvivesARestart() throws {
        let dir = TemporaryDirectory()
        let original = thumbnail(5000)
        do {
            let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
            #expect(cache.write(original, for: key("a.jpg")))
            #expect(cache.read(key("a.jpg"))?.bytes == original.bytes)
        }
        let reopened = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        let read = try #require(reopened.read(key("a.jpg")))
        #expect(read.bytes == original.bytes)
        #expect(read.format == .png)
        #expect(read.width == 33 && read.height == 44)
        #expect(reopened.statistics.entries == 1)
        #expect(reopened.statistics.hits == 1)
        #expect(reopened.read(key("a.jpg", mtime: 2)) == nil)  // a replaced source is another key
    }

    @Test(arguments: ["empty", "half", "flipped", "keyByte", "otherKey"])
    func damagedEntriesAreDeletedNotServed(damage: String) throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        let k = key("b.jpg")
        cache.write(thumbnail(3000), for: k)
        let path = cache.path(for: k.digest)
        var bytes = try #require(FileManager.default.contents(atPath: path).map { [UInt8]($0) })
        switch damage {
        case "empty": bytes = []
        case "half": bytes = Array(bytes.prefix(bytes.count / 2))
        case "keyByte": bytes[DiskEntry.fixedHeaderSize + 2] ^= 0x01
        case "otherKey":   // an intact entry of the same length, for another key (a digest collision)
            bytes = DiskEntry.encode(thumbnail(3000), key: key("c.jpg").canonical)
            #expect(bytes.count == (try #require(FileManager.default.contents(atPath: path))).count)
        default: bytes[bytes.count - 10] ^= 0xff
        }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        #expect(cache.read(k) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(cache.statistics.corrupt == 1)
        #expect(cache.statistics.entries == 0)
        // Planted before a restart: indexed at start, then refused on read.
        cache.write(thumbnail(3000), for: k)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let reopened = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        #expect(reopened.read(k) == nil)
        #expect(reopened.statistics.corrupt == 1)
    }

    @Test func theLimitIsNeverExceededOnDisk() throws {
        let dir = TemporaryDirectory()
        let limit = 3 << 20
        let cache = try DiskCache(directory: dir.path, limitBytes: limit)
        for i in 0..<300 {
            cache.write(thumbnail(20_000 + (i * 7919) % 60_000, fill: UInt8(i % 200)), for: key("p\(i).jpg"))
            #expect(bytesOnDisk(dir.path + "/entries") <= limit)
        }
        let stats = cache.statistics
        #expect(stats.bytes <= limit)
        #expect(stats.evictions > 0)
        #expect(stats.entries + stats.evictions == 300)
        #expect(bytesOnDisk(dir.path + "/entries") == stats.bytes)
    }

    @Test func evictsTheLeastRecentlyReadFirstAcrossARestart() throws {
        let dir = TemporaryDirectory()
        do {
            // Ten 4 KiB blocks; every hit stamps the mtime (resolution 0).
            let cache = try DiskCache(directory: dir.path, limitBytes: 40_960, recencyResolutionSeconds: 0)
            for i in 0..<5 {  // 2 blocks each: full. Apart in time: mtimes tick in jiffies.
                cache.write(thumbnail(8000), for: key("e\(i)"))
                usleep(20_000)
            }
            #expect(cache.read(key("e0")) != nil)  // e0 becomes the most recent; e1 the oldest
        }
        let cache = try DiskCache(directory: dir.path, limitBytes: 40_960)
        cache.write(thumbnail(8000), for: key("new"))
        #expect(cache.contains(key("e0")))
        #expect(!cache.contains(key("e1")))
        #expect(cache.statistics.evictions == 1)
    }

    /// A lower limit (`disk_cache_bytes` reloaded) evicts the least recently used entries down
    /// to it at once, their files unlinked; a higher one lets later writes keep more.
    @Test func aNewLimitEvictsDownToItAtOnce() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 40_960, recencyResolutionSeconds: 0)
        for i in 0..<5 { cache.write(thumbnail(8000), for: key("e\(i)")) }   // 2 blocks each: full
        #expect(cache.read(key("e0")) != nil)   // e0 the most recent; e1, e2 the oldest
        #expect(cache.setLimit(24_576) == 2)    // six blocks: three entries stay
        #expect(cache.limitBytes == 24_576)
        #expect(!cache.contains(key("e1")) && !cache.contains(key("e2")))
        #expect(cache.contains(key("e0")) && cache.contains(key("e3")) && cache.contains(key("e4")))
        #expect(cache.statistics.bytes == 24_576 && cache.statistics.evictions == 2)
        #expect(bytesOnDisk(dir.path + "/entries") == 24_576)
        #expect(cache.setLimit(81_920) == 0)
        for i in 5..<10 { cache.write(thumbnail(8000), for: key("e\(i)")) }
        #expect(cache.statistics.entries == 8 && cache.statistics.evictions == 2)
    }

    @Test func aHitStampsTheMtimeOnlyWhenItIsOlderThanTheResolution() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20, recencyResolutionSeconds: 1)
        cache.write(thumbnail(100), for: key("a"))
        let path = try #require(FileManager.default.enumerator(atPath: dir.path + "/entries")?
            .compactMap { $0 as? String }.first { $0.contains("/") })
        func mtime() -> Int64 {
            var st = stat()
            stat(dir.path + "/entries/" + path, &st)
            return st.st_mtim.nanoseconds
        }
        let written = mtime()
        #expect(cache.read(key("a")) != nil)
        #expect(mtime() == written)   // fresh: not rewritten
        var old = [timespec(tv_sec: time(nil) - 5, tv_nsec: 0), timespec(tv_sec: time(nil) - 5, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, dir.path + "/entries/" + path, &old, 0) == 0)
        let backdated = mtime()
        #expect(cache.read(key("a")) != nil)
        #expect(mtime() > backdated + 4_000_000_000)   // 5 s old: stamped with now
    }

    @Test func aReadThatMayNotWaitServesThePageCacheAndDefersTheRest() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        let stored = thumbnail(9000)
        cache.write(stored, for: key("warm"))
        guard case .hit(let found) = cache.readWithoutWaiting(key("warm")) else {
            Issue.record("a freshly written entry is in the page cache")
            return
        }
        #expect(found.bytes == stored.bytes && found.width == 33 && found.height == 44 && found.format == .png)
        guard case .miss = cache.readWithoutWaiting(key("absent")) else {
            Issue.record("an unknown key is a miss")
            return
        }
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.misses == 0)   // the caller counts a miss it acts on
        #expect(cache.countMissIfAbsent(key("absent")))
        #expect(!cache.countMissIfAbsent(key("warm")))
        #expect(cache.statistics.misses == 1)
        // Push the entry's pages out of the page cache: the read must not wait for the disk.
        let path = try #require(FileManager.default.enumerator(atPath: dir.path + "/entries")?
            .compactMap { $0 as? String }.first { $0.contains("/") })
        // The kernel may keep freshly written pages a while (per-CPU LRU batches) under load:
        // ask again until they are gone; each read that still finds them counts a hit.
        var extraHits = 0
        var deferred = false
        for _ in 0..<50 where !deferred {
            let fd = open(dir.path + "/entries/" + path, O_RDONLY)
            #expect(fsync(fd) == 0)
            #expect(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0)
            close(fd)
            switch cache.readWithoutWaiting(key("warm")) {
            case .wouldBlock: deferred = true
            case .hit: extraHits += 1; usleep(20_000)
            case .miss: Issue.record("a stored entry is never a miss")
            }
        }
        #expect(deferred, "an entry not in the page cache must not be read without waiting")
        #expect(cache.statistics.hits == 1 + extraHits)   // nothing counted for the deferred read
        #expect(cache.statistics.misses == 1)
        #expect(cache.statistics.corrupt == 0)
        #expect(cache.read(key("warm"))?.bytes == stored.bytes)
        #expect(cache.statistics.hits == 2 + extraHits)
    }

    /// The bytes an open entry stands for, read back through its descriptor.
    func payload(_ entry: OpenDiskEntry) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: entry.payloadLength)
        let n = pread(entry.fd, &bytes, entry.payloadLength, off_t(entry.payloadOffset))
        return n == entry.payloadLength ? bytes : []
    }

    @Test func anOpenEntryIsCheckedOnceReusedAndDroppedWhenRewritten() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        let first = thumbnail(9000, fill: 1)
        cache.write(first, for: key("o"))
        guard case .hit(let opened) = cache.openWithoutWaiting(key("o")) else {
            Issue.record("a written entry opens")
            return
        }
        #expect(payload(opened) == first.bytes)
        #expect(opened.width == 33 && opened.height == 44 && opened.format == .png)
        guard case .hit(let again) = cache.openWithoutWaiting(key("o")) else {
            Issue.record("a second hit opens too")
            return
        }
        #expect(again === opened)   // no re-open, no re-check
        #expect(cache.statistics.hits == 2)

        let second = thumbnail(7000, fill: 2)
        cache.write(second, for: key("o"))   // renamed over the old file
        guard case .hit(let reopened) = cache.openWithoutWaiting(key("o")) else {
            Issue.record("a rewritten entry opens")
            return
        }
        #expect(reopened !== opened)
        #expect(payload(reopened) == second.bytes)
        #expect(payload(opened) == first.bytes)   // a response still sending the old one is unharmed

        guard case .miss = cache.openWithoutWaiting(key("absent")) else {
            Issue.record("an unknown key is a miss")
            return
        }
        #expect(cache.statistics.misses == 0)   // counted by the caller that acts on it
    }

    @Test func aFifoPlantedAtAnEntryPathIsDroppedWithoutBlockingAndLeftInPlace() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        for (name, read) in [("r", { (k: CacheKey) in cache.read(k) != nil }),
                             ("w", { (k: CacheKey) in if case .hit = cache.readWithoutWaiting(k) { true } else { false } }),
                             ("o", { (k: CacheKey) in if case .hit = cache.openWithoutWaiting(k) { true } else { false } })] {
            cache.write(thumbnail(500), for: key(name))
            let path = cache.path(for: key(name).digest)
            unlink(path)
            #expect(mkfifo(path, 0o644) == 0)
            let started = Date()
            #expect(!read(key(name)))   // open(2) on a FIFO without O_NONBLOCK waits for a writer
            #expect(Date().timeIntervalSince(started) < 1)
            var st = stat()
            #expect(lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)   // not thumbd's: not deleted
        }
        #expect(cache.statistics.corrupt == 3)
        #expect(cache.statistics.entries == 0)
    }

    @Test func anEmptyDirectoryPlantedAtAnEntryPathIsRemovedSoTheKeyCanBeStoredAgain() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        cache.write(thumbnail(500), for: key("d"))
        let path = cache.path(for: key("d").digest)
        unlink(path)
        #expect(mkdir(path, 0o755) == 0)
        #expect(cache.read(key("d")) == nil)
        #expect(cache.statistics.corrupt == 1)
        #expect(cache.write(thumbnail(600), for: key("d")))
        #expect(cache.read(key("d"))?.bytes == thumbnail(600).bytes)
        #expect(cache.statistics.writeErrors == 0)
    }

    @Test func aDirectoryWithFilesAtAnEntryPathIsNeverRemovedNorWrittenOver() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        cache.write(thumbnail(500), for: key("d"))
        let path = cache.path(for: key("d").digest)
        unlink(path)
        dir.write(String(path.dropFirst(dir.path.count + 1)) + "/inside.jpg", [0xFF, 0xD8, 0xFF, 1, 2, 3])
        #expect(cache.read(key("d")) == nil)
        #expect(!cache.write(thumbnail(600), for: key("d")))   // the key cannot be stored: counted, harmless
        #expect(cache.statistics.writeErrors == 1)
        #expect(FileManager.default.contents(atPath: path + "/inside.jpg") == Data([0xFF, 0xD8, 0xFF, 1, 2, 3]))
    }

    @Test func aForeignFileAtAnEntryNameIsNeitherDeletedNorReplaced() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        cache.write(thumbnail(500), for: key("f"))
        let path = cache.path(for: key("f").digest)
        let photo = Fixtures.photo("Landscape_1.jpg")
        unlink(path)
        _ = FileManager.default.createFile(atPath: path, contents: photo)
        #expect(cache.read(key("f")) == nil)               // not an entry: a miss
        #expect(!cache.write(thumbnail(600), for: key("f")))   // and never renamed over
        #expect(FileManager.default.contents(atPath: path) == photo)
        let reopened = try DiskCache(directory: dir.path, limitBytes: 1)   // evicts everything it indexes
        #expect(reopened.statistics.entries == 0)
        #expect(FileManager.default.contents(atPath: path) == photo)
    }

    @Test func entriesAreWrittenReadOnly() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        cache.write(thumbnail(500), for: key("ro"))
        var st = stat()
        #expect(stat(cache.path(for: key("ro").digest), &st) == 0)
        #expect(st.st_mode & 0o777 == 0o444)
    }

    @Test func anEntryWrittenToWhileItIsCheckedIsNotKeptAsChecked() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        cache.write(thumbnail(9000), for: key("raced"))
        cache.afterCheckForTesting.withLock {
            $0 = { path in   // another process writes into the file just after the check read it
                chmod(path, 0o644)
                let fd = open(path, O_WRONLY)
                var zeros = [UInt8](repeating: 0, count: 100)
                _ = pwrite(fd, &zeros, zeros.count, 200)
                close(fd)
            }
        }
        guard case .wouldBlock = cache.openWithoutWaiting(key("raced")) else {
            Issue.record("a file that changed during its check must not be sent from")
            return
        }
        cache.afterCheckForTesting.withLock { $0 = nil }
        guard case .miss = cache.openWithoutWaiting(key("raced")) else {   // checked again: corrupt
            Issue.record("the changed file is checked again and refused")
            return
        }
        #expect(cache.statistics.corrupt == 1)
        #expect(cache.statistics.hits == 0)
    }

    @Test func startUpRemovesOnlyItsOwnTemporaryFilesAndLeavesStrayNames() throws {
        let dir = TemporaryDirectory()
        _ = try DiskCache(directory: dir.path, limitBytes: 1 << 20)   // claims (tags) the directory
        dir.write("tmp/123-4.tmp", DiskEntry.magic + [1, 2])   // a write cut short by a crash
        dir.write("tmp/124-5.tmp", [])
        dir.write("tmp/125-6.tmp", [1, 2, 3])                 // the name is ours, the bytes are not
        dir.write("tmp/126-7.tmp", Array("THU".utf8))         // nor are these: not the whole magic
        dir.write("tmp/notes.txt", [7, 7])
        dir.write("entries/ab/not-a-digest", [1])
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/tmp/123-4.tmp"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/tmp/124-5.tmp"))
        #expect(FileManager.default.contents(atPath: dir.path + "/tmp/125-6.tmp") == Data([1, 2, 3]))
        #expect(FileManager.default.contents(atPath: dir.path + "/tmp/126-7.tmp") == Data("THU".utf8))
        #expect(FileManager.default.contents(atPath: dir.path + "/tmp/notes.txt") == Data([7, 7]))
        #expect(FileManager.default.contents(atPath: dir.path + "/entries/ab/not-a-digest") == Data([1]))
        #expect(cache.statistics.entries == 0)
    }

    /// Another program's file at the temporary name a write is about to use (two containers
    /// sharing a cache volume both run thumbd as pid 1) is neither written into nor removed.
    @Test func aFileAtTheNextTemporaryNameIsNeitherWrittenNorRemoved() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        for n in 1...3 { dir.write("tmp/\(getpid())-\(n).tmp", Array("precious \(n)".utf8)) }
        for n in 1...3 { #expect(!cache.write(thumbnail(100), for: key("t\(n)"))) }
        #expect(cache.statistics.writeErrors == 3)
        for n in 1...3 {
            #expect(FileManager.default.contents(atPath: dir.path + "/tmp/\(getpid())-\(n).tmp") == Data("precious \(n)".utf8))
        }
        #expect(cache.write(thumbnail(100), for: key("t4")))   // the next name is free
    }

    @Test func aFailedWriteIsCountedAndLeavesNoFile() throws {
        let dir = TemporaryDirectory()
        let cache = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        // Even root cannot create a file inside a regular file: every write now fails.
        try FileManager.default.removeItem(atPath: dir.path + "/tmp")
        _ = FileManager.default.createFile(atPath: dir.path + "/tmp", contents: Data())
        #expect(!cache.write(thumbnail(100), for: key("x")))
        #expect(cache.statistics.writeErrors == 1)
        #expect(cache.statistics.entries == 0)
        #expect(cache.statistics.bytes == 0)
        #expect(cache.read(key("x")) == nil)
    }

    /// A symlink planted at a shard's name in `entries/` (to the library, say) is never written
    /// through, and what lies behind it is neither indexed at start nor evicted: the cache
    /// writes and deletes only inside its own tree. Found by a fresh-eyes session, which saw
    /// entries land in the library.
    @Test func aSymlinkedShardIsNeverWrittenThroughNorEvictedFrom() throws {
        let dir = TemporaryDirectory()
        let elsewhere = TemporaryDirectory("thumbd-elsewhere")
        let probe = try DiskCache(directory: dir.path, limitBytes: 1 << 20)
        let shard = probe.shardDirectory(for: key("a.jpg").digest)
        // An entry written there before (a file that looks like thumbd's), then the shard
        // replaced by a link to the other directory.
        #expect(probe.write(thumbnail(5000), for: key("a.jpg")))
        let name = String(probe.path(for: key("a.jpg").digest).split(separator: "/").last!)
        #expect(rename(shard + "/" + name, elsewhere.path + "/" + name) == 0)
        #expect(rmdir(shard) == 0)
        #expect(symlink(elsewhere.path, shard) == 0)

        let cache = try DiskCache(directory: dir.path, limitBytes: 8192)   // one entry's room
        #expect(cache.statistics.entries == 0)   // not indexed through the link
        // A key of that shard is refused, and nothing is written through the link.
        let sameShard = try #require((2..<5000).lazy.map { self.key("s.jpg", mtime: Int64($0)) }
            .first { cache.shardDirectory(for: $0.digest) == shard })
        #expect(!cache.write(thumbnail(5000), for: sameShard))
        #expect(cache.statistics.writeErrors == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == [name])
        // Others are stored, evicting each other, and no eviction reaches behind the link.
        for i in 0..<40 where cache.shardDirectory(for: key("k\(i).jpg").digest) != shard {
            #expect(cache.write(thumbnail(5000), for: key("k\(i).jpg")))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path) == [name])
        #expect(FileManager.default.fileExists(atPath: elsewhere.path + "/" + name))
    }
}
