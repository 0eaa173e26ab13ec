import Dispatch
import Foundation
import Library
import Rendering
import Synchronization
import Locking

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
    /// The render workers and their queues: every render, and the placeholders' preview reads
    /// and backfill renders, run on them.
    public let scheduler: RenderScheduler
    let renderStatistics = RenderStatistics()
    let knownFailures = KnownFailures()
    /// The placeholders renders make (`thumbhash` in the listing), kept in the store given at init.
    public let placeholders: Placeholders
    let renderer: any ThumbnailRendering
    /// Every miss under way: the state machine whose effects this pipeline performs
    /// (`Flights`). Events go in under this lock; effects are performed outside it.
    let flights: Mutex<FlightTable>
    typealias FlightTable = Flights<ThumbnailCompletion, WarmCompletion, ThumbnailResult>
    /// Uptime in nanoseconds: client deadlines and render times.
    let clock: any UptimeClock
    let diskQueue = DispatchQueue(label: "thumbd.disk", qos: .userInitiated, attributes: .concurrent)

    /// A client's place in a flight, for `abandon(_:)` when the client goes away.
    public struct Waiting: Sendable {
        let digest: String
        let waiter: UInt64
    }

    private let nextWaiter = Atomic<UInt64>(1)

    /// Wires the pipeline to its disk tier, opened by the caller (`DiskCache(configuration:)`),
    /// and starts the render workers. No file is touched here.
    /// - Parameters:
    ///   - renderer: libvips by default; tests give a stand-in.
    ///   - placeholderStore: where placeholders made beside renders are kept (the library
    ///     index); nil: none are made.
    ///   - clock: the system's uptime by default.
    public init(configuration: PipelineConfiguration, disk: DiskCache, renderer: any ThumbnailRendering = Renderer(),
                placeholderStore: (any ThumbhashStore)? = nil, clock: any UptimeClock = SystemUptimeClock()) {
        self.configuration = configuration
        self.renderer = renderer
        self.clock = clock
        self.disk = disk
        placeholders = Placeholders(store: placeholderStore)
        flights = Mutex(FlightTable(waitNanoseconds: configuration.waitNanoseconds))
        memory = MemoryCache(limitBytes: configuration.memoryLimitBytes, fileBudget: configuration.memoryFileBudget)
        scheduler = RenderScheduler(workers: configuration.renderWorkers, foregroundLimit: configuration.renderQueueLimit,
                                    backgroundConcurrency: configuration.prefetchWorkers, clock: clock)
    }

    /// Opens the disk tier at `configuration.cacheDirectory` (`DiskCache(configuration:)`), then
    /// wires as `init(configuration:disk:renderer:placeholderStore:clock:)`.
    /// - Throws: `DiskCache.SetupError` when the cache directory cannot be used.
    public convenience init(configuration: PipelineConfiguration, renderer: any ThumbnailRendering = Renderer(),
                            placeholderStore: (any ThumbhashStore)? = nil, clock: any UptimeClock = SystemUptimeClock()) throws {
        self.init(configuration: configuration, disk: try DiskCache(configuration: configuration), renderer: renderer,
                  placeholderStore: placeholderStore, clock: clock)
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
    /// flight or leads one (blocking disk read, then render; `Flights`). `completion` runs
    /// exactly once, synchronously only when the render queue is full (503) or the flight had
    /// just been rendered, and not at all after `abandon` with the returned place (nil when it
    /// already ran).
    @discardableResult
    public func thumbnail(for request: ThumbnailRequest, after absence: Absence,
                          completion: @escaping ThumbnailCompletion) -> Waiting? {
        let digest = request.key.digest
        let waiter = nextWaiter.wrappingAdd(1, ordering: .relaxed).oldValue
        if case .miss = absence.disk { scheduler.clientMissed(digest) }   // prefetch late for it: catch up
        let effects = flights.withLock { $0.handle(.clientAsked(key: digest, waiter: waiter, client: completion), at: clock.now()) }
        let answered = effects.contains { if case .answer = $0 { true } else { false } }
        perform(effects, for: request, diskLookup: absence.disk)
        return answered ? nil : Waiting(digest: digest, waiter: waiter)
    }

    /// The client at `waiting` went away (its connection closed): it stops waiting, and its
    /// completion is never called. When no client is left on the flight and its render has not
    /// started, the render is dropped as it comes up (`renders.abandoned`), unless a prefetch
    /// job counts on it or a client answered 503 at its deadline will ask again. A render
    /// already running finishes and is stored. Does nothing once the flight has been rendered.
    /// New byte limits for the memory and disk tiers (`memory_cache_bytes`, `disk_cache_bytes`
    /// reloaded), each evicted down to its own at once (`MemoryCache.setLimit`,
    /// `DiskCache.setLimit`). Blocks on the disk tier's unlinks: never on an event loop.
    /// `configuration` keeps the limits the pipeline was made with.
    public func setCacheLimits(memoryBytes: Int, diskBytes: Int) {
        if memoryBytes != memory.limitBytes { memory.setLimit(memoryBytes) }
        if diskBytes != disk.limitBytes { disk.setLimit(diskBytes) }
    }

    public func abandon(_ waiting: Waiting) {
        handle(.clientLeft(key: waiting.digest, waiter: waiting.waiter), for: nil)
    }

    /// Feeds `event` to the flights at the clock's time and performs what it leads to.
    func handle(_ event: FlightTable.Event, for request: ThumbnailRequest?) {
        let effects = flights.withLock { $0.handle(event, at: clock.now()) }
        perform(effects, for: request)
    }

    /// Performs the flights' effects in order, outside their lock. `request`: the request the
    /// event was about (nil for a timer or a client that left, whose effects need none);
    /// `diskLookup`: what the disk tier said without waiting, for a leader's `readDisk`.
    private func perform(_ effects: [FlightTable.Effect], for request: ThumbnailRequest?,
                         diskLookup: DiskCache.Lookup = .wouldBlock) {
        for effect in effects {
            switch effect {
            case .answer(let clients, let outcome):
                for client in clients { client(outcome) }
            case .tell(let prefetches, let outcome):
                for prefetch in prefetches { prefetch(outcome) }
            case .armTimer(let key, let flight, let at):
                diskQueue.asyncAfter(deadline: .now() + clock.interval(until: at)) {
                    self.handle(.timerFired(key: key, flight: flight), for: nil)
                }
            case .countCoalesced: renderStatistics.recordCoalesced()
            case .countAbandoned: renderStatistics.recordAbandoned()
            case .countRefused: renderStatistics.recordRefused()
            case .keepInMemory(let key, let value):
                if let thumbnail = value.thumbnail { memory.insert(thumbnail, for: key) }
            case .readDisk, .enqueueRender, .render, .storeOnDisk:
                guard let request else { preconditionFailure("\(effect) follows only an event about a request") }
                perform(effect, for: request, diskLookup: diskLookup)
            }
        }
    }

    /// The effects that do the work of one request: read, queue, render, store.
    private func perform(_ effect: FlightTable.Effect, for request: ThumbnailRequest, diskLookup: DiskCache.Lookup) {
        switch effect {
        case .readDisk(let key, let flight):
            // Absent a moment ago and still absent: render. Otherwise (not in the page cache,
            // or written by a render that finished meanwhile) read it where blocking is fine.
            if case .miss = diskLookup, disk.countMissIfAbsent(request.key) {
                handle(.diskRead(key: key, flight: flight, found: nil), for: request)
            } else {
                diskQueue.async {
                    let found = self.disk.read(request.key)
                    if let found { self.memory.insert(found, for: key) }
                    self.handle(.diskRead(key: key, flight: flight, found: found.map { ThumbnailResult(thumbnail: $0, tier: .disk) }),
                                for: request)
                }
            }
        case .enqueueRender(let key, let flight):
            if let failure = knownFailures.failure(of: request.failureSource) {
                renderStatistics.recordKnownFailure()
                return handle(.rendered(key: key, flight: flight, outcome: .failure(.render(failure))), for: request)
            }
            let queued = scheduler.enqueue(.foreground) {
                self.handle(.renderCameUp(key: key, flight: flight), for: request)
            }
            if !queued { handle(.renderRefused(key: key, flight: flight), for: request) }
        case .render(let key, let flight, let forPrefetch):
            ThreadRole.assertCurrent(.renderWorker, "a render runs on a render worker")
            let outcome = renderNow(request, prefetch: forPrefetch)
            if case .failure(.render(let error)) = outcome {
                knownFailures.record(error, for: request.failureSource)
                if error.kind == .sourceUnreadable { placeholders.forget(request.key.assetPath) }
            }
            handle(.rendered(key: key, flight: flight, outcome: outcome), for: request)
        case .storeOnDisk(let key, let flight, let value, let inMemory):
            var stored = WarmOutcome.done
            if let thumbnail = value.thumbnail {
                switch disk.store(thumbnail, for: request.key) {
                case .written: stored = .done
                case .failed(let why), .tooLarge(let why), .noRoom(let why), .busy(let why):
                    // Held by the memory tier (not when over 10% of its limit, or it is off): done.
                    stored = inMemory && memory.contains(key) ? .done : .notStored(why)
                }
            }
            handle(.stored(key: key, flight: flight, outcome: stored), for: request)
        default:
            preconditionFailure("\(effect) is performed by perform(_:for:diskLookup:)")
        }
    }

    /// Lets the render workers exit once their queues are empty (server shutdown).
    public func stop() {
        scheduler.stop()
    }

    /// Whether the disk tier can keep thumbnails as configured now: nil, or why not (one
    /// sentence). Checks the cache's directories and makes them again when they were removed,
    /// and drops the entries of shards removed under it (`DiskCache.checkDirectoriesAndShards`);
    /// then probes its file system (`DiskCache.checkSpace`: full, or read-only).
    /// Blocks on file I/O: call it off the event loops.
    @discardableResult
    public func checkDiskCache() -> String? {
        disk.checkDirectoriesAndShards() ?? disk.checkSpace()
    }
}
