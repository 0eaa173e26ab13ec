import Dispatch
import Foundation
import Library
import Rendering
import Synchronization

/// The cache and render pipeline: memory cache → disk cache → render, with coalescing.
///
/// Concurrent requests for one key share one lookup: the first becomes the flight's leader, the
/// rest wait on it (`renders.coalesced`) and get the same bytes or the same error. A failed render
/// is remembered only when it lies in the file itself (`KnownFailures`: 415 and 422, until the
/// file changes); any other failure is not, and the next request tries again. Disk hits are promoted to memory; renders for
/// clients go to memory and disk, renders for prefetch only to disk (a large prefetch must not
/// flush what clients are looking at). Disk reads run on `diskQueue`, renders on the
/// `RenderScheduler`; nothing here blocks the caller except a memory lookup.
///
/// The caches and the scheduler are its own: clients reach them through `cached` and
/// `thumbnail`, prefetch jobs through `isCached`, `prefetch` and `stopPrefetching`, so the rules
/// "clients first" and "prefetch writes to disk only" live here alone.
public final class ThumbnailPipeline: Sendable {
    public let configuration: PipelineConfiguration
    let memory: MemoryCache
    let disk: DiskCache
    let scheduler: RenderScheduler
    let renderStatistics = RenderStatistics()
    let knownFailures = KnownFailures()
    /// The placeholders renders make (`thumbhash` in the listing), once given a store.
    public let placeholders = Placeholders()
    let renderer: any ThumbnailRendering
    let flights = Mutex<[String: Flight]>([:])
    let diskQueue = DispatchQueue(label: "thumbd.disk", qos: .userInitiated, attributes: .concurrent)

    /// A lookup in progress for one key, and the requests waiting on it.
    struct Flight {
        /// Tells this flight from a later one for the same key (a deadline timer belongs to one).
        let id: UInt64
        var waiters: [Waiter]
        /// Set once the outcome is known; joiners after that get it at once.
        var outcome: Result<ThumbnailResult, ThumbnailError>?
        /// Whether a client waits on it (its render then goes to memory as well as disk).
        var foreground: Bool
        /// When the armed deadline timer fires (uptime ns); nil when none is armed.
        var timerDeadline: UInt64?
        /// Whether a waiter was answered 503 at its deadline (it will ask again: its render
        /// goes on even with no waiter left), or a prefetch job counts on this flight's render.
        var stillWanted = false
        /// Prefetch items that joined this flight, told how it ended when it is removed
        /// (whether its thumbnail was stored: `WarmOutcome`).
        var prefetches: [WarmCompletion] = []
        /// Whether a client render of this flight waits in the foreground queue.
        var renderQueued = false
        /// Whether a worker has taken this flight's render: the client's queued one as it comes
        /// up, or a prefetch item of the same key that came up first (`warm`).
        var rendering = false

        /// A client flight whose every client went away (`abandon`) before its render started:
        /// the render is dropped.
        var isAbandoned: Bool { foreground && waiters.isEmpty && !stillWanted }
    }

    /// A client waiting on a flight, and when it stops waiting (uptime ns; `.max`: never).
    struct Waiter {
        /// Tells this waiter from the flight's others (`Waiting`).
        let id: UInt64
        let completion: ThumbnailCompletion
        let deadline: UInt64
    }

    /// A client's place in a flight, for `abandon(_:)` when the client goes away.
    public struct Waiting: Sendable {
        let digest: String
        let flight: UInt64
        let waiter: UInt64
    }

    let nextFlightID = Atomic<UInt64>(1)

    /// Opens the disk cache and starts the render workers. `renderer`: libvips by default; tests
    /// give a stand-in.
    /// - Throws: `DiskCache.SetupError` when the cache directory cannot be used.
    public init(configuration: PipelineConfiguration, renderer: any ThumbnailRendering = Renderer()) throws {
        self.configuration = configuration
        self.renderer = renderer
        memory = MemoryCache(limitBytes: configuration.memoryLimitBytes, fileBudget: configuration.memoryFileBudget)
        disk = try DiskCache(directory: configuration.cacheDirectory, limitBytes: configuration.diskLimitBytes,
                             openEntryLimit: configuration.openDiskEntryLimit, library: configuration.libraryRoot)
        scheduler = RenderScheduler(workers: configuration.renderWorkers, foregroundLimit: configuration.renderQueueLimit,
                                    backgroundConcurrency: configuration.prefetchWorkers)
    }

    /// What `cached(_:acceptsFile:)` found without waiting.
    public enum CachedLookup: Sendable {
        /// A memory hit, or a disk hit whose entry was in the page cache.
        case hit(ThumbnailResult)
        /// Not answerable without waiting: hand this to `thumbnail(for:after:completion:)`.
        case absent(Absence)
    }

    /// What the disk tier said in a `cached` lookup that found nothing ready, so that the
    /// waiting step neither repeats it nor counts it twice.
    public struct Absence: Sendable {
        let disk: DiskCache.Lookup
    }

    /// The first step of a client request, on the caller's thread and without blocking: the
    /// memory tier, then a disk entry in the page cache (no flight, no thread hop, no deadline
    /// timer: reading an entry twice at once costs less than coordinating). Counts hits and
    /// misses as `thumbnail` does.
    /// `acceptsFile`: the caller can send a hit from an open file (`ThumbnailResult.file`): a
    /// memory entry held in a memfd, or, when the memory tier is off, a disk entry, so the bytes
    /// need not pass through memory.
    public func cached(_ key: CacheKey, acceptsFile: Bool = false) -> CachedLookup {
        let digest = key.digest
        if let entry = memory.entry(for: digest) {
            if acceptsFile, let file = entry.file {
                return .hit(ThumbnailResult(body: .file(ThumbnailFile(fd: file.fd, offset: 0, count: file.count, owner: file)),
                                            format: entry.format, width: entry.width, height: entry.height, tier: .memory))
            }
            if let thumbnail = entry.withBytes() { return .hit(ThumbnailResult(thumbnail: thumbnail, tier: .memory)) }
        }
        let diskLookup: DiskCache.Lookup
        if acceptsFile && memory.limitBytes == 0 {
            switch disk.openWithoutWaiting(key) {
            case .hit(let entry):
                let file = ThumbnailFile(fd: entry.fd, offset: entry.payloadOffset, count: entry.payloadLength, owner: entry)
                return .hit(ThumbnailResult(body: .file(file), format: entry.format, width: entry.width,
                                            height: entry.height, tier: .disk))
            case .miss: diskLookup = .miss
            case .wouldBlock: diskLookup = .wouldBlock
            }
        } else {
            diskLookup = disk.readWithoutWaiting(key)
        }
        if case .hit(let thumbnail) = diskLookup {
            memory.insert(thumbnail, for: digest)
            return .hit(ThumbnailResult(thumbnail: thumbnail, tier: .disk))
        }
        return .absent(Absence(disk: diskLookup))
    }

    /// The second step of a client request that `cached` did not answer: joins the key's
    /// flight or leads one (blocking disk read, then render). `completion` runs exactly once,
    /// synchronously only when the render queue is full (503) or the flight had just finished,
    /// and not at all after `abandon` with the returned place (nil when it already ran).
    @discardableResult
    public func thumbnail(for request: ThumbnailRequest, after absence: Absence,
                          completion: @escaping ThumbnailCompletion) -> Waiting? {
        let digest = request.key.digest
        let diskLookup = absence.disk
        enum Role { case leader, waiter, done(Result<ThumbnailResult, ThumbnailError>) }
        let waiter = Waiter(id: nextFlightID.wrappingAdd(1, ordering: .relaxed).oldValue,
                            completion: completion, deadline: waitingDeadline())
        var timer: (id: UInt64, at: UInt64)?
        var flightID: UInt64 = 0
        let role = flights.withLock { flights -> Role in
            guard var flight = flights[digest] else {
                let id = nextFlightID.wrappingAdd(1, ordering: .relaxed).oldValue
                var flight = Flight(id: id, waiters: [waiter], foreground: true)
                timer = Self.armIfNeeded(&flight, for: waiter)
                flights[digest] = flight
                flightID = id
                return .leader
            }
            if let outcome = flight.outcome { return .done(outcome) }
            flight.waiters.append(waiter)
            flight.foreground = true
            timer = Self.armIfNeeded(&flight, for: waiter)
            flights[digest] = flight
            flightID = flight.id
            return .waiter
        }
        if let timer { scheduleExpiry(digest, flight: timer.id, at: timer.at) }
        if case .miss = diskLookup { scheduler.clientMissed(digest) }   // prefetch late for it: catch up
        switch role {
        case .leader:
            // Absent a moment ago and still absent: render. Otherwise (not in the page cache,
            // or written by a render that finished meanwhile) read it where blocking is fine.
            if case .miss = diskLookup, disk.countMissIfAbsent(request.key) {
                startRender(request)
            } else {
                diskQueue.async { self.lookUpDisk(request) }
            }
        case .waiter:
            renderStatistics.recordCoalesced()
        case .done(let outcome):
            renderStatistics.recordCoalesced()
            completion(outcome)
            return nil
        }
        return Waiting(digest: digest, flight: flightID, waiter: waiter.id)
    }

    /// The client at `waiting` went away (its connection closed): it stops waiting, and its
    /// completion is never called. When no client is left on the flight and its render has not
    /// started, the render is dropped as it comes up (`renders.abandoned`), unless a prefetch
    /// job counts on it or a client answered 503 at its deadline will ask again. A render
    /// already running finishes and is stored. Does nothing once the flight has ended.
    public func abandon(_ waiting: Waiting) {
        flights.withLock { flights in
            guard var flight = flights[waiting.digest], flight.id == waiting.flight, flight.outcome == nil else { return }
            flight.waiters.removeAll { $0.id == waiting.waiter }
            flights[waiting.digest] = flight
        }
    }

    /// As a queued client render of flight `id` comes up: whether to run it. Not when the
    /// flight has ended or a prefetch item took its render (`warm`), nor when every client has
    /// gone: an abandoned flight is removed here and counted, and its render does not run.
    private func claimQueuedRender(_ digest: String, flight id: UInt64) -> Bool {
        let (run, abandoned) = flights.withLock { flights -> (Bool, Bool) in
            guard var flight = flights[digest], flight.id == id, flight.outcome == nil, !flight.rendering else {
                return (false, false)
            }
            if flight.isAbandoned {
                flights[digest] = nil
                return (false, true)
            }
            flight.rendering = true
            flights[digest] = flight
            return (true, false)
        }
        if abandoned { renderStatistics.recordAbandoned() }
        return run
    }

    /// The leader's second step when the entry was not in the page cache: the disk cache (may
    /// block), then a render.
    private func lookUpDisk(_ request: ThumbnailRequest) {
        if let thumbnail = disk.read(request.key) {
            serveFromDisk(thumbnail, digest: request.key.digest)
        } else {
            startRender(request)
        }
    }

    private func serveFromDisk(_ thumbnail: Thumbnail, digest: String) {
        memory.insert(thumbnail, for: digest)
        finish(digest, with: .success(ThumbnailResult(thumbnail: thumbnail, tier: .disk)))
        removeFlight(digest, reporting: .skipped)   // it was on disk: a prefetch that joined rendered nothing
    }

    /// Queues the leader's render (foreground), or answers 503 when the queue is full, or at
    /// once with the failure remembered for its source.
    private func startRender(_ request: ThumbnailRequest) {
        if let failure = knownFailures.failure(of: request.failureSource) {
            renderStatistics.recordKnownFailure()
            finish(request.key.digest, with: .failure(.render(failure)))
            removeFlight(request.key.digest)
            return
        }
        let digest = request.key.digest
        guard let id = flights.withLock({ $0[digest]?.id }) else { return }
        let queued = scheduler.enqueue(.foreground) {
            guard self.claimQueuedRender(digest, flight: id) else { return }
            self.complete(request, with: self.renderNow(request, prefetch: false))
        }
        if queued {
            flights.withLock { flights in
                guard var flight = flights[digest], flight.id == id, !flight.rendering else { return }
                flight.renderQueued = true   // a prefetch item of this key may take it first
                flights[digest] = flight
            }
        } else {
            renderStatistics.recordRefused()
            finish(request.key.digest, with: .failure(.overloaded))
            removeFlight(request.key.digest)
        }
    }

    /// Lets the render workers exit once their queues are empty (server shutdown).
    public func stop() {
        scheduler.stop()
    }

    /// Whether the disk tier can keep thumbnails now: nil, or why not (one sentence). Checks the
    /// cache's directories and makes them again when they were removed (`DiskCache.checkDirectories`).
    /// Blocks on file I/O: call it off the event loops.
    @discardableResult
    public func checkDiskCache() -> String? {
        disk.checkDirectories()
    }

    /// Completes the flight's waiters with a render's outcome, then stores a success: in memory
    /// when a client waits on it, and on disk. Returns what that came to for a prefetch item,
    /// and tells it to the prefetch items that joined the flight: `.done` when a tier holds the
    /// thumbnail now (the disk, or memory when a client waited on the render), `.notStored`
    /// with the disk's reason when none does.
    @discardableResult
    func complete(_ request: ThumbnailRequest, with outcome: Result<ThumbnailResult, ThumbnailError>) -> WarmOutcome {
        let digest = request.key.digest
        switch outcome {
        case .success(let result):
            // A render's bytes are in memory.
            guard let thumbnail = result.thumbnail else {
                finish(digest, with: outcome)
                removeFlight(digest)
                return .done
            }
            // A client that joined while the render ran still wants it in memory.
            var held = false
            if flights.withLock({ $0[digest]?.foreground ?? false }) {
                memory.insert(thumbnail, for: digest)
                held = memory.contains(digest)   // not when over 10% of the limit, or the tier is off
            }
            finish(digest, with: .success(result))
            let stored: WarmOutcome
            switch disk.store(thumbnail, for: request.key) {
            case .written: stored = .done
            case .failed(let why), .tooLarge(let why), .noRoom(let why): stored = held ? .done : .notStored(why)
            }
            removeFlight(digest, reporting: stored)
            return stored
        case .failure(let error):
            if case .render(let renderError) = error { knownFailures.record(renderError, for: request.failureSource) }
            finish(digest, with: .failure(error))
            return Self.warmOutcome(of: error)
        }
    }

    /// What a failed lookup comes to for a prefetch item: `.failed` when the source could not
    /// be rendered, `.notStored` when the render never ran.
    static func warmOutcome(of error: ThumbnailError) -> WarmOutcome {
        switch error {
        case .render: .failed
        case .overloaded: .notStored("the render queue was full")
        case .deadlineExceeded: .notStored("the render outlived its deadline")
        }
    }

    /// Records the outcome and completes every waiter (outside the lock). A failure ends the
    /// flight, and the prefetch items that joined it are told (`warmOutcome(of:)`); after a
    /// success they are told by `removeFlight`, once the thumbnail is stored or not.
    func finish(_ digest: String, with outcome: Result<ThumbnailResult, ThumbnailError>) {
        let (waiters, prefetches) = flights.withLock { flights -> ([ThumbnailCompletion], [WarmCompletion]) in
            guard var flight = flights[digest] else { return ([], []) }
            let waiters = flight.waiters.map(\.completion)
            flight.waiters = []
            if case .success = outcome {
                flight.outcome = outcome
                flights[digest] = flight
                return (waiters, [])
            }
            flights[digest] = nil   // failures are not remembered: the next request tries again
            return (waiters, flight.prefetches)
        }
        for waiter in waiters { waiter(outcome) }
        if case .failure(let error) = outcome {
            for prefetch in prefetches { prefetch(Self.warmOutcome(of: error)) }
        }
    }

    /// Removes a flight whose outcome is known (or that no client waits on), and tells the
    /// prefetch items that joined it `outcome` (outside the lock): taken in the same lock as
    /// the removal, so an item that joins at the last moment is told too.
    func removeFlight(_ digest: String, reporting outcome: WarmOutcome = .done) {
        let prefetches = flights.withLock { flights -> [WarmCompletion] in
            guard let flight = flights[digest], flight.outcome != nil || flight.waiters.isEmpty else { return [] }
            flights[digest] = nil
            return flight.prefetches
        }
        for prefetch in prefetches { prefetch(outcome) }
    }
}
