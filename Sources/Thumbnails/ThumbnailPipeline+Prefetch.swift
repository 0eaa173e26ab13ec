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
    /// is warmed (`warm`) and `outcome` is told how that went, on the render worker.
    public func prefetch(_ request: ThumbnailRequest, group: Int,
                         outcome: @escaping @Sendable (WarmOutcome) -> Void) {
        scheduler.enqueue(.background(group: group), key: request.key.digest) { [self] in outcome(warm(request)) }
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
    /// or a render of it is under way. Blocks; runs on a render worker as background work. A
    /// client request that arrives meanwhile joins this render.
    func warm(_ request: ThumbnailRequest) -> WarmOutcome {
        let digest = request.key.digest
        if isCached(request.key) { return .skipped }
        if knownFailures.failure(of: request.failureSource) != nil { return .failed }
        let lead = flights.withLock { flights -> Bool in
            if flights[digest] != nil {
                flights[digest]!.stillWanted = true   // its render must run even if its clients go
                return false
            }
            flights[digest] = Flight(id: nextFlightID.wrappingAdd(1, ordering: .relaxed).oldValue,
                                     waiters: [], foreground: false)
            return true
        }
        guard lead else { return .done }  // a client's lookup of this key is under way and will store it
        let outcome = renderNow(request, prefetch: true)
        complete(request, with: outcome)
        if case .success = outcome { return .done }
        return .failed
    }
}

/// What warming one prefetch item came to.
public enum WarmOutcome: Sendable {
    /// Already in memory or on disk: no render.
    case skipped
    /// Rendered and stored, or joined to a render under way.
    case done
    /// The source could not be rendered.
    case failed
}
