import Rendering
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
        #expect(cache.value(for: "a") != nil)       // a is now the most recent; b is the oldest
        cache.insert(thumbnail(100), for: "k")      // 1100 > 1000: evict b
        #expect(cache.value(for: "b") == nil)
        #expect(cache.value(for: "a") != nil)
        let stats = cache.statistics
        #expect(stats.entries == 10)
        #expect(stats.bytes == 1000)
        #expect(stats.evictions == 1)
        #expect(stats.hits == 2)
        #expect(stats.misses == 1)
    }

    @Test func refusesEntriesOverTenPercentOfTheLimit() {
        let cache = MemoryCache(limitBytes: 1000)
        cache.insert(thumbnail(101), for: "big")
        cache.insert(thumbnail(100), for: "fits")
        #expect(cache.value(for: "big") == nil)
        #expect(cache.value(for: "fits")?.bytes.count == 100)
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
