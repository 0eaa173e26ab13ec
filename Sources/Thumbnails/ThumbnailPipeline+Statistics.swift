import Dispatch
import Foundation
import Rendering
import Synchronization

extension ThumbnailPipeline {
    /// What the pipeline reports (`/stats`: `memory_cache`, `disk_cache`, `renders`,
    /// `prefetch.queued`), each part read at one moment.
    public struct Statistics: Sendable {
        public var memory: MemoryCache.Statistics
        public var disk: DiskCache.Statistics
        public var renders: RenderStatistics.Snapshot
        /// Renders running now (client and prefetch).
        public var running: Int
        /// Client misses, and prefetch items, waiting for a render worker.
        public var queuedForClients: Int, queuedForPrefetch: Int
        /// Keys with a lookup under way (a disk read or a render that clients or a prefetch
        /// wait on): 0 when the server is idle, whatever clients did before.
        public var flights: Int
        /// Client misses for a thumbnail a prefetch job still had queued past the time the pool
        /// should have reached it, since start; and whether prefetch is catching up now
        /// (`RenderScheduler.clientMissed`).
        public var latePrefetch: Int, catchingUp: Bool
    }

    public var statistics: Statistics {
        let counts = scheduler.counts
        let pace = scheduler.prefetchPace
        return Statistics(memory: memory.statistics, disk: disk.statistics, renders: renderStatistics.snapshot,
                          running: counts.running, queuedForClients: counts.queuedForeground,
                          queuedForPrefetch: counts.queuedBackground, flights: flights.withLock { $0.count },
                          latePrefetch: pace.lateMisses, catchingUp: pace.catchingUp)
    }
}
