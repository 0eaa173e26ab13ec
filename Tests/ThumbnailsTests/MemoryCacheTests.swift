import Rendering
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Thumbnails

@Suite struct MemoryCacheTests {
    func thumbnail(_ size: Int) -> Thumbnail {
        Thumbnail(bytes: [UInt8](repeating: 7, count: size), format: .jpeg, width: 1, height: 1)
    }

    @Test func evictsLeastRecentlyUsedByBytes() {
        let cache = MemoryCache(limitBytes: 1000)
        cache.insert(thumbnail(100), for: "a")
        cache.insert(thumbnail(100), for: "b")
        for name in ["c", "d", "e", "f", "g", "h", "i", "j"] { cache.insert(thumbnail(100), for: name) }
        #expect(cache.statistics.bytes == 1000)
        #expect(cache.entry(for: "a") != nil)       // a is now the most recent; b is the oldest
        cache.insert(thumbnail(100), for: "k")      // 1100 > 1000: evict b
        #expect(cache.entry(for: "b") == nil)
        #expect(cache.entry(for: "a") != nil)
        let stats = cache.statistics
        #expect(stats.entries == 10)
        #expect(stats.bytes == 1000)
        #expect(stats.evictions == 1)
        #expect(stats.hits == 2)
        #expect(stats.misses == 1)
    }

    /// Within the file budget entries keep their bytes in sealed memfds (sent with sendfile);
    /// beyond it, in arrays. Evicting closes the descriptor.
    /// A lower limit (`memory_cache_bytes` reloaded) evicts the least recently used down to it
    /// at once; the 10% rule then follows the new limit.
    @Test func aNewLimitEvictsDownToItAtOnce() {
        let cache = MemoryCache(limitBytes: 1000)
        for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] { cache.insert(thumbnail(100), for: name) }
        #expect(cache.entry(for: "a") != nil)   // a the most recent; b, c, d... the oldest
        cache.setLimit(400)
        #expect(cache.limitBytes == 400)
        #expect(cache.statistics.bytes == 400 && cache.statistics.entries == 4 && cache.statistics.evictions == 6)
        #expect(cache.entry(for: "a") != nil && cache.entry(for: "j") != nil && cache.entry(for: "b") == nil)
        cache.insert(thumbnail(41), for: "big")   // over 10% of 400
        #expect(cache.entry(for: "big") == nil)
    }

    @Test func entriesWithinTheFileBudgetLiveInSealedMemfds() throws {
        let cache = MemoryCache(limitBytes: 1000, fileBudget: 2)
        let bytes = (0..<100).map { UInt8($0) }
        for name in ["a", "b", "c"] {
            cache.insert(Thumbnail(bytes: bytes, format: .png, width: 2, height: 3), for: name)
        }
        #expect(cache.files.openCount == 2)
        let a = try #require(cache.entry(for: "a")), c = try #require(cache.entry(for: "c"))
        let file = try #require(a.file)
        #expect(a.format == .png && a.width == 2 && a.height == 3)
        #expect(file.count == 100 && file.bytes() == bytes)
        #expect(c.file == nil && c.withBytes()?.bytes == bytes)   // over the budget: an array
        #expect(cache.entry(for: "a")?.withBytes()?.bytes == bytes)   // read back for callers that want bytes
        // Sealed: neither written nor grown.
        #expect(pwrite(file.fd, [9], 1, 0) == -1)
        #expect(ftruncate(file.fd, 1000) == -1)
        var st = stat()
        #expect(fstat(file.fd, &st) == 0 && st.st_size == 100)
    }

    @Test func evictingAFileEntryClosesItsDescriptor() {
        let cache = MemoryCache(limitBytes: 1000, fileBudget: 1)
        cache.insert(thumbnail(100), for: "a")
        #expect(cache.files.openCount == 1)
        // Ten more of 100 bytes (arrays: the budget is taken) push "a" out.
        for i in 0..<10 { cache.insert(thumbnail(100), for: "filler-\(i)") }
        #expect(cache.entry(for: "a") == nil)
        #expect(cache.files.openCount == 0)
    }

    @Test func refusesEntriesOverTenPercentOfTheLimit() {
        let cache = MemoryCache(limitBytes: 1000)
        cache.insert(thumbnail(101), for: "big")
        cache.insert(thumbnail(100), for: "fits")
        #expect(cache.entry(for: "big") == nil)
        #expect(cache.entry(for: "fits")?.withBytes()?.bytes.count == 100)
        #expect(cache.statistics.entries == 1)
    }

    @Test func replacingAnEntryKeepsTheByteCountRight() {
        let cache = MemoryCache(limitBytes: 10_000)
        cache.insert(thumbnail(500), for: "a")
        cache.insert(thumbnail(300), for: "a")
        #expect(cache.statistics.bytes == 300)
        #expect(cache.statistics.entries == 1)
    }

    @Test func manyInsertsNeverExceedTheLimit() {
        let cache = MemoryCache(limitBytes: 5000)
        for i in 0..<2000 {
            cache.insert(thumbnail(1 + (i * 37) % 500), for: "k\(i % 300)")
            #expect(cache.statistics.bytes <= 5000)
        }
    }
}
