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

    /// A cached thumbnail: what it is, and where its bytes are.
    public struct Entry: Sendable {
        /// Where an entry's bytes are: in an array, or in a sealed memfd (sent with `sendfile`).
        public enum Storage: Sendable {
            case bytes([UInt8])
            case file(MemoryFile)
        }

        public let storage: Storage
        public let format: ImageFormat
        /// px.
        public let width: Int, height: Int

        /// The memfd holding the bytes, when they are in one.
        public var file: MemoryFile? {
            if case .file(let file) = storage { return file }
            return nil
        }

        /// The thumbnail with its bytes in memory, read back from the memfd when they are in
        /// one; nil when that read fails.
        public func withBytes() -> Thumbnail? {
            switch storage {
            case .bytes(let bytes): return Thumbnail(bytes: bytes, format: format, width: width, height: height)
            case .file(let file): return file.bytes().map { Thumbnail(bytes: $0, format: format, width: width, height: height) }
            }
        }
    }

    /// The byte limit (default 256 MiB in config); changed by `setLimit` (a reload).
    public var limitBytes: Int { limit.load(ordering: .relaxed) }
    private let limit: Atomic<Int>
    /// How many entries may keep their bytes in memfds at once (each holds a descriptor until
    /// its last response is written); the rest keep them in arrays.
    public let files: MemoryFile.Budget
    private let state: Mutex<LRUList<Entry>>

    /// - Parameters:
    ///   - limitBytes: the bound on the sum of entry sizes, bytes; 0 disables the tier.
    ///   - fileBudget: entries that may be held in sealed memfds (`MemoryFile`); `0` (default): none.
    public init(limitBytes: Int, fileBudget: Int = 0) {
        limit = Atomic(max(0, limitBytes))
        files = MemoryFile.Budget(limit: max(0, fileBudget))
        self.state = Mutex(LRUList<Entry>())
    }

    /// The entry for `digest`, made most recently used; counts a hit or a miss.
    public func entry(for digest: String) -> Entry? {
        state.withLock { lru in
            if let value = lru.touch(digest) {
                lru.hits += 1
                return value
            }
            lru.misses += 1
            return nil
        }
    }

    /// The entry for `digest`, neither counted nor made more recent: a donor for a smaller
    /// grid (`ThumbnailPipeline.derivationDonor`) is not a request for it.
    public func peek(_ digest: String) -> Entry? {
        state.withLock { $0.peek(digest) }
    }

    /// The entry for `digest` without counting or reordering (for prefetch's "already cached").
    public func contains(_ digest: String) -> Bool {
        state.withLock { $0.index[digest] != nil }
    }

    /// Stores `thumbnail` as most recently used, evicting from the cold end until it fits.
    /// Ignored when the entry is over 10% of the limit.
    public func insert(_ thumbnail: Thumbnail, for digest: String) {
        let cost = thumbnail.bytes.count
        let limitBytes = limitBytes
        guard cost <= limitBytes / 10, cost > 0 else { return }
        let file = files.limit > 0 ? MemoryFile(bytes: thumbnail.bytes, budget: files) : nil
        let entry = Entry(storage: file.map { .file($0) } ?? .bytes(thumbnail.bytes),
                          format: thumbnail.format, width: thumbnail.width, height: thumbnail.height)
        state.withLock { lru in
            lru.insert(digest, entry, cost: cost)
            while lru.totalCost > limitBytes, lru.removeLeastRecent() { lru.evictions += 1 }
        }
    }

    /// A new byte limit (`memory_cache_bytes` reloaded), least recently used entries evicted
    /// at once down to it. A limit of 0 keeps the tier empty, but a tier made with 0 (off) has
    /// no memfd budget: turning it on takes a restart (`DescriptorBudget`).
    public func setLimit(_ bytes: Int) {
        let bytes = max(0, bytes)
        state.withLock { lru in
            limit.store(bytes, ordering: .relaxed)
            while lru.totalCost > bytes, lru.removeLeastRecent() { lru.evictions += 1 }
        }
    }

    public var statistics: Statistics {
        state.withLock { lru in
            Statistics(entries: lru.index.count, bytes: lru.totalCost, limitBytes: limitBytes,
                       hits: lru.hits, misses: lru.misses, evictions: lru.evictions)
        }
    }
}
