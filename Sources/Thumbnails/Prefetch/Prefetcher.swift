import Synchronization

/// Runs prefetch jobs (docs/API.md, "Prefetch"; like `PHCachingImageManager.startCachingImages`):
/// each job's items go to the render scheduler as background work of the job's group, so client
/// misses run first, newer jobs run before older ones, and prefetch holds at most
/// `prefetch_workers` of the workers.
/// Items already cached are counted `skipped` without touching the queue. Stopping a job drops
/// its queued items at once (`cancelled`); items already running finish and stay cached.
/// Thread-safe: jobs and totals sit behind one `Mutex`.
public final class Prefetcher: Sendable {
    /// Totals over all jobs, for `/stats` (`prefetch`).
    public struct Statistics: Sendable, Equatable {
        public var jobs = 0
        /// Items waiting in the scheduler.
        public var queued = 0
        public var done = 0, skipped = 0, failed = 0, notStored = 0, cancelled = 0
        /// Client misses for an item a job still had queued past the time the pool should have
        /// reached it (prefetch behind its client), since start.
        public var late = 0
        /// Whether prefetch is catching up now: prefetch items run before client misses, two
        /// for one (`RenderScheduler`).
        public var catchingUp = false
    }

    /// Finished jobs kept for `GET /prefetch/{id}` (the newest this many).
    public static let retainedJobs = 1000

    private struct State {
        var jobs: [Int: PrefetchJob] = [:]
        var nextID = 1
        var totals = Statistics()
    }

    private let pipeline: ThumbnailPipeline
    private let state = Mutex(State())

    public init(pipeline: ThumbnailPipeline) {
        self.pipeline = pipeline
    }

    /// Starts a job over `requests`; `failedUpfront` items (missing sources) count as failed at once.
    /// Returns the job as it stands after the cached items were counted. First checks the disk
    /// cache's directories (`ThumbnailPipeline.checkDiskCache`), so that entries removed under
    /// the server are not counted cached. Blocks on file I/O: call it off the event loops.
    public func start(grid: String, requests: [ThumbnailRequest], failedUpfront: Int = 0) -> PrefetchJob {
        pipeline.checkDiskCache()
        var toQueue: [ThumbnailRequest] = []
        var skipped = 0
        for request in requests {
            if pipeline.isCached(request.key) {
                skipped += 1
            } else {
                toQueue.append(request)
            }
        }
        let job = state.withLock { s -> PrefetchJob in
            let id = s.nextID
            s.nextID += 1
            var job = PrefetchJob(id: id, grid: grid, state: .running, total: requests.count + failedUpfront)
            job.skipped = skipped
            job.failed = failedUpfront
            if job.outstanding == 0 { job.state = .done }
            s.jobs[id] = job
            s.totals.jobs += 1
            s.totals.skipped += skipped
            s.totals.failed += failedUpfront
            s.jobs = s.jobs.filter { $0.key > id - Self.retainedJobs || $0.value.state == .running }
            return job
        }
        for request in toQueue {
            pipeline.prefetch(request, group: job.id) { [self] outcome in record(outcome, job: job.id) }
        }
        // A stop that came while the items were being queued counted them all cancelled but
        // could only drop those queued by then: drop the rest now.
        if state.withLock({ $0.jobs[job.id]?.state }) == .cancelled {
            pipeline.stopPrefetching(group: job.id)
        }
        return job
    }

    /// The job with `id`, or nil.
    public func job(_ id: Int) -> PrefetchJob? {
        state.withLock { $0.jobs[id] }
    }

    /// Stops job `id`: its queued items are dropped and counted `cancelled`, and so are the
    /// items rendering at that moment (their renders finish and are cached, but the job's counts
    /// are final: docs/API.md's "final state"). A job that had already finished is returned
    /// unchanged. Nil when there is no such job.
    public func cancel(_ id: Int) -> PrefetchJob? {
        guard state.withLock({ $0.jobs[id] }) != nil else { return nil }
        let dropped = pipeline.stopPrefetching(group: id)
        return state.withLock { s in
            guard var job = s.jobs[id] else { return nil }
            if job.state == .running {
                let inFlight = max(0, job.outstanding - dropped)
                job.cancelled += dropped + inFlight
                job.state = .cancelled
                s.totals.cancelled += dropped + inFlight
                s.jobs[id] = job
            }
            return job
        }
    }

    /// Stops every running job (`stopCachingImagesForAllAssets`); returns them in their final state.
    public func cancelAll() -> [PrefetchJob] {
        let running = state.withLock { $0.jobs.values.filter { $0.state == .running }.map(\.id) }.sorted()
        return running.compactMap { cancel($0) }
    }

    public var statistics: Statistics {
        var totals = state.withLock { $0.totals }
        let pipeline = pipeline.statistics
        totals.queued = pipeline.queuedForPrefetch
        totals.late = pipeline.latePrefetch
        totals.catchingUp = pipeline.catchingUp
        return totals
    }

    /// Counts an item's outcome; nothing for a job already cancelled (it counted the item).
    private func record(_ outcome: WarmOutcome, job id: Int) {
        state.withLock { s in
            guard var job = s.jobs[id], job.state == .running else { return }
            switch outcome {
            case .skipped: job.skipped += 1; s.totals.skipped += 1
            case .done: job.done += 1; s.totals.done += 1
            case .failed: job.failed += 1; s.totals.failed += 1
            case .notStored(let why): job.notStored += 1; job.notStoredReason = why; s.totals.notStored += 1
            }
            if job.state == .running, job.outstanding == 0 { job.state = .done }
            s.jobs[id] = job
        }
    }
}
