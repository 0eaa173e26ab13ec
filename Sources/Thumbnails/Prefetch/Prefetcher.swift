import Dispatch
import Locking
import Synchronization

/// Runs prefetch jobs (docs/API.md, "Prefetch"; like `PHCachingImageManager.startCachingImages`):
/// each job's items go to the render scheduler as background work of the job's group, so client
/// misses run first, newer jobs run before older ones, and prefetch holds at most
/// `prefetch_workers` of the workers.
/// Items already cached are counted `skipped` without touching the queue. Stopping a job drops
/// its queued items at once (`cancelled`); items already running finish and stay cached.
/// Each job belongs to a client (`PrefetchJob.owner`), which alone sees and stops it (an owner of
/// nil in a call is the admin: every job); per-client limits (`PrefetchLimits`) admit or refuse
/// a job before anything is queued.
/// Thread-safe: jobs, totals and admission sit behind one `Mutex`.
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
        /// Jobs refused by a per-client limit, by `PrefetchRefusal.outcome` (`too_many_jobs`,
        /// `too_many_items`, `rate_limited`), since start.
        public var refused: [String: Int] = ["too_many_jobs": 0, "too_many_items": 0, "rate_limited": 0]
    }

    /// Finished jobs kept for `GET /prefetch/{id}` (the newest this many).
    public static let retainedJobs = 1000

    /// The first job id of a run: random in 1...2^40, so that a restarted server does not
    /// give a job the id of one from before (a client polling, or another node holding a part
    /// of a job by its id, would reach another job); ids then count up by one, and stay below
    /// 2^53, the largest whole number a JSON client reads exactly.
    static func firstID() -> Int { Int.random(in: 1...(1 << 40)) }

    private struct State {
        var jobs: [Int: PrefetchJob] = [:]
        var nextID = Prefetcher.firstID()
        var totals = Statistics()
        var admission = PrefetchAdmission()
        /// Running jobs that `admission` admitted (the admin's are not counted against anyone).
        var admitted = Set<Int>()

        /// `job` left `running`: if it was admitted, its owner may start another.
        mutating func ended(_ job: PrefetchJob) {
            if admitted.remove(job.id) != nil { admission.ended(owner: job.owner) }
        }
    }

    private let pipeline: ThumbnailPipeline
    private let state = Mutex(State())
    /// The per-client limits (`prefetch_client_*`).
    public let limits: PrefetchLimits
    /// Seconds on a monotonic clock, for the items-per-minute bucket (tests give their own).
    private let clock: @Sendable () -> Double

    /// `limits`: `PrefetchLimits()`'s defaults unless given. `clock`: seconds, monotonic.
    public init(pipeline: ThumbnailPipeline, limits: PrefetchLimits = PrefetchLimits(),
                clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.pipeline = pipeline
        self.limits = limits
        self.clock = clock
    }

    /// A job id no job has, for a `start` to come (`start(id:)`): a node of a cluster takes its
    /// job's id before it forwards the job's parts, so that they know it. An id reserved and
    /// never started is simply skipped.
    public func reserveID() -> Int {
        state.withLock { s in
            defer { s.nextID += 1 }
            return s.nextID
        }
    }

    /// Starts a job over `requests`; `failedUpfront` items (missing sources) count as failed at once.
    /// `id`: one `reserveID` gave; nil (the default) for the next.
    /// Returns the job as it stands after the cached items were counted. First checks the disk
    /// cache's directories (`ThumbnailPipeline.checkDiskCache`), so that entries removed under
    /// the server are not counted cached. Blocks on file I/O: call it off the event loops.
    /// `owner`: whose job it is; `limited`: whether `limits` apply (not for the admin).
    /// - Throws: `PrefetchRefusal` when `owner` is past a limit: nothing is queued, and the
    ///   refusal is counted in `statistics.refused`.
    public func start(grid: String, owner: String = "anonymous", limited: Bool = true, requests: [ThumbnailRequest],
                      failedUpfront: Int = 0, id reserved: Int? = nil) throws(PrefetchRefusal) -> PrefetchJob {
        ThreadRole.assertNot(.eventLoop, "Prefetcher.start blocks on file I/O")
        if limited {
            let now = clock()
            let refusal = state.withLock { s -> PrefetchRefusal? in
                let refusal = s.admission.admit(owner: owner, items: requests.count + failedUpfront, limits: limits, now: now)
                if let refusal { s.totals.refused[refusal.outcome, default: 0] += 1 }
                return refusal
            }
            if let refusal { throw refusal }
        }
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
            let id = reserved ?? s.nextID
            if reserved == nil { s.nextID += 1 }
            var job = PrefetchJob(id: id, grid: grid, owner: owner, state: .running, total: requests.count + failedUpfront)
            job.skipped = skipped
            job.failed = failedUpfront
            if limited { s.admitted.insert(id) }
            if job.outstanding == 0 {
                job.state = .done
                s.ended(job)
            }
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

    /// The job with `id`, or nil (also when it is not `owner`'s; nil `owner`: the admin's view).
    public func job(_ id: Int, owner: String? = nil) -> PrefetchJob? {
        state.withLock { $0.jobs[id] }.flatMap { owner == nil || $0.owner == owner ? $0 : nil }
    }

    /// Stops job `id`: its queued items are dropped and counted `cancelled`, and so are the
    /// items rendering at that moment (their renders finish and are cached, but the job's counts
    /// are final: docs/API.md's "final state"). A job that had already finished is returned
    /// unchanged. Nil when there is no such job.
    /// A job that is not `owner`'s is not there for it (nil `owner`: the admin, any job).
    public func cancel(_ id: Int, owner: String? = nil) -> PrefetchJob? {
        guard job(id, owner: owner) != nil else { return nil }
        // Marked first, its queued items dropped after: a `start` still queueing them sees the
        // mark when it is done and drops what it queued since (dropping first left those queued
        // for good when the mark came after start looked: a stop-all racing a start).
        let job = state.withLock { s -> PrefetchJob? in
            guard var job = s.jobs[id] else { return nil }
            if job.state == .running {
                let outstanding = job.outstanding   // queued or rendering: all counted cancelled
                job.cancelled += outstanding
                job.state = .cancelled
                s.totals.cancelled += outstanding
                s.jobs[id] = job
                s.ended(job)
            }
            return job
        }
        pipeline.stopPrefetching(group: id)
        return job
    }

    /// Stops every running job of `owner`'s (`stopCachingImagesForAllAssets`), or with a nil
    /// `owner` every client's; returns them in their final state.
    public func cancelAll(owner: String? = nil) -> [PrefetchJob] {
        let running = state.withLock {
            $0.jobs.values.filter { $0.state == .running && (owner == nil || $0.owner == owner) }.map(\.id)
        }.sorted()
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
            if job.state == .running, job.outstanding == 0 {
                job.state = .done
                s.ended(job)
            }
            s.jobs[id] = job
        }
    }
}
