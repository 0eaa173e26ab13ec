import Rendering
import Synchronization

/// The first cache tier: thumbnails in memory, least recently used evicted first, bounded by the
/// sum of their byte sizes. An entry larger than 10% of the limit is not kept (as Nuke's
/// `ImageCache` does), so one big grid-1 render cannot flush the grid-3 working set.
/// Thread-safe: all state sits behind one `Mutex`.
public final class MemoryCache: Sendable {
    /// Counters and gauges for `/stats` (`memory_cache`).
    public struct Statistics: Sendable, Equatable {
        public var entries = 0
        /// Sum of the entries' encoded sizes, bytes.
        public var bytes = 0
        public var limitBytes = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
    }

    /// The byte limit (default 256 MiB in config).
    public let limitBytes: Int
    private let state: Mutex<LRUList<Thumbnail>>

    /// - Parameter limitBytes: the bound on the sum of entry sizes, bytes; 0 disables the tier.
    public init(limitBytes: Int) {
        self.limitBytes = max(0, limitBytes)
        self.state = Mutex(LRUList<Thumbnail>())
    }

    /// The entry for `digest`, made most recently used; counts a hit or a miss.
    public func value(for digest: String) -> Thumbnail? {
        state.withLock { lru in
            if let value = lru.touch(digest) {
                lru.hits += 1
                return value
            }
            lru.misses += 1
            return nil
        }
    }

    /// The entry for `digest` without counting or reordering (for prefetch's "already cached").
    public func contains(_ digest: String) -> Bool {
        state.withLock { $0.index[digest] != nil }
    }

    /// Stores `thumbnail` as most recently used, evicting from the cold end until it fits.
    /// Ignored when the entry is over 10% of the limit.
    public func insert(_ thumbnail: Thumbnail, for digest: String) {
        let cost = thumbnail.bytes.count
        guard cost <= limitBytes / 10, cost > 0 else { return }
        state.withLock { lru in
            lru.insert(digest, thumbnail, cost: cost)
            while lru.totalCost > limitBytes, lru.removeLeastRecent() { lru.evictions += 1 }
        }
    }

    public var statistics: Statistics {
        state.withLock { lru in
            Statistics(entries: lru.index.count, bytes: lru.totalCost, limitBytes: limitBytes,
                       hits: lru.hits, misses: lru.misses, evictions: lru.evictions)
        }
    }
}
