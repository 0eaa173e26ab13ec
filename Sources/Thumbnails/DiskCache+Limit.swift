import Locking

/// A new byte limit for the disk tier (`disk_cache_bytes` reloaded).
extension DiskCache {
    /// Takes `bytes` as the configured limit (`DiskSpace.configuredLimit`: a full file system's
    /// lowered limit stays while it is lower) and evicts least recently used entries down to it at once,
    /// as `store` evicts: under the lock they leave the index and their cost is held as
    /// `pendingUnlink` (so no write takes their room while they are on disk), then they are
    /// unlinked. An entry whose unlink fails stays counted, as a write's victim does; room held
    /// by writes under way is freed as they end.
    /// Blocks on file I/O (one unlink per victim): never on an event loop.
    /// Returns how many entries were evicted.
    @discardableResult
    public func setLimit(_ bytes: Int) -> Int {
        ThreadRole.assertNot(.eventLoop, "DiskCache.setLimit blocks on file I/O")
        let victims = index.withLock { state -> [(digest: String, cost: Int)] in
            limit.store(max(0, bytes), ordering: .relaxed)
            state.space.configuredLimit = max(0, bytes)
            var victims: [(digest: String, cost: Int)] = []
            // Entries being written or deleted (`busy`) are never in `lru`: none is picked.
            // What writes and deletions under way hold stays on disk whatever is evicted.
            let held = state.reserved + state.pendingUnlink
            while state.lru.totalCost + held > state.space.limit,   // lower still while the file system is full
                  let oldest = state.lru.leastRecentKey, let cost = state.lru.remove(oldest) {
                state.lru.evictions += 1
                state.open[oldest] = nil
                state.busy.insert(oldest)
                state.pendingUnlink += cost
                victims.append((oldest, cost))
            }
            return victims
        }
        let removed = victims.map { removeDropped(path(for: $0.digest)) }
        index.withLock { state in
            for (victim, gone) in zip(victims, removed) {
                state.busy.remove(victim.digest)
                if gone { state.pendingUnlink -= victim.cost } else { state.writeErrors += 1 }
            }
        }
        return victims.count
    }
}
