import Rendering
import Synchronization

/// Prefetch through the pipeline: cache checks, background renders that write to disk only,
/// and stopping a job's queued items (`Prefetcher` drives these; the rules live here).
extension ThumbnailPipeline {
    /// Whether `key`'s thumbnail is in memory or on disk now (no page-cache or entry check).
    public func isCached(_ key: CacheKey) -> Bool {
        memory.contains(key.digest) || disk.contains(key)
    }

    /// Queues `request` for prefetch job `group` (background work: after every client miss,
    /// newer groups first, on at most `prefetchWorkers` workers at once). When its turn comes it
    /// is warmed (`warm`) and `outcome` is told how that went, once: on the render worker, or
    /// where the render it joined ends.
    public func prefetch(_ request: ThumbnailRequest, group: Int, outcome: @escaping WarmCompletion) {
        scheduler.enqueue(.background(group: group), key: request.key.digest) { [self] in warm(request, outcome: outcome) }
    }

    /// Drops every queued item of prefetch job `group`; returns how many were dropped. Their
    /// `outcome` is never called. Items already rendering finish and are stored.
    @discardableResult
    public func stopPrefetching(group: Int) -> Int {
        scheduler.cancel(group: group)
    }

    /// The most render workers prefetch work holds at once (`prefetch_workers`, resolved).
    public var prefetchWorkers: Int { scheduler.backgroundConcurrency }

    /// Warms the cache for a prefetch job: renders `request` to disk unless it is cached already
    /// or a lookup of it is under way, which it joins. A client render of the key still waiting
    /// in the queue is run here and now (the item's turn came first: while prefetch catches up,
    /// it runs before client misses) and goes to the client as well. Blocks; runs on a render
    /// worker as background work. A client request that arrives meanwhile joins this render.
    /// `outcome` is told once what came of it: at once, or when the joined render ends and is
    /// stored.
    func warm(_ request: ThumbnailRequest, outcome: @escaping WarmCompletion) {
        if isCached(request.key) { return outcome(.skipped) }
        if knownFailures.failure(of: request.failureSource) != nil { return outcome(.failed) }
        handle(.prefetchArrived(key: request.key.digest, prefetch: outcome), for: request)
    }
}

/// What warming one prefetch item came to.
public enum WarmOutcome: Sendable, Equatable {
    /// Already in memory or on disk: no render.
    case skipped
    /// Rendered, or joined to a render under way, and held by a tier now: on disk, or in memory
    /// when a client waited on the render (a prefetch alone never writes to memory).
    case done
    /// The source could not be rendered.
    case failed
    /// Rendered (or joined to a render) but kept by no tier, so a later GET renders again: why,
    /// one sentence naming the disk fault (a full or read-only file system, a cache directory
    /// that could not be made again, an entry over the disk cache's limit), or that the render
    /// never ran (a full render queue).
    case notStored(String)
}

/// How a prefetch item is told what came of it (`ThumbnailPipeline.prefetch`).
public typealias WarmCompletion = @Sendable (WarmOutcome) -> Void
