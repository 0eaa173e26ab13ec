/// The render scheduler's decisions as a value (`RenderScheduler` is the thin driver that runs
/// them on its worker threads): which queued item a free worker takes next, given the time.
/// Generic over the work it holds, so that its tests are tables of plain values; no threads, no
/// clock of its own.
///
/// Foreground work (client misses) runs first (unless prefetch is catching up, below), oldest
/// first until misses fall behind (below); background work (prefetch) is grouped by job, the
/// newest group first, and runs on at most `backgroundConcurrency` workers at once (all by
/// default: a client miss that finds every worker on prefetch starts when the first of them
/// finishes, within one render).
///
/// Client misses follow the adaptive LIFO of Facebook's "Fail at Scale" (CACM 2016): first in,
/// first out while the oldest has waited less than `lifoAfterNanoseconds` (a screen's worth of
/// misses comes out top to bottom), last in, first out once it has waited longer (a grid
/// scrolled faster than renders keep up with: the newest miss is the cell that has just appeared
/// and stays on screen longest, while the oldest belong to cells about to scroll away, whose
/// clients leave and whose renders are then dropped, `Flights`). Plain LIFO would leave the
/// first screen's top row, asked first, to the last. Measured with `Tests/Benchmarks/scroll.sh`:
/// docs/performance.md. An old miss waits at most its client's `render_timeout_seconds`, then
/// gets 503.
///
/// Prefetch that falls behind the scroll (a client misses an item its job still has queued,
/// later than the pool should have reached it) catches up: for a second, two prefetch items run
/// for each client miss (`PrefetchPace`).
///
/// Preview work (placeholders read from photos' embedded previews, `PreviewPlaceholders`) runs
/// after client misses and before prefetch: a preview costs about a twentieth of a render and
/// gives a cell of any row something to show (a grid flung past its first screens shows them
/// rather than blank cells), while a client miss that comes meanwhile waits for one preview at
/// most. Prefetch that is catching up goes before it when it goes before a client miss. The
/// previews of a grid's first screens (`.preview(firstScreens: true)`) go before client misses:
/// on a cold server the first screen's misses come a moment after its listing, and each of its
/// cells is then painted a twentieth of a render later (its placeholder) rather than a whole
/// screen of renders later.
///
/// Idle work (the placeholder backfill) starts only while no client miss, no preview and no
/// prefetch item waits or runs, and no client miss nor prefetch item has for
/// `idleQuietNanoseconds`, one at a time.
struct RenderQueues<Work> {
    /// What a free worker is to do.
    enum Take {
        /// Run `work`, then report `finished(_:took:at:)` with `priority`.
        case run(Work, RenderScheduler.Priority)
        /// Wait until woken (`enqueue`, `finished` and `stop` name the worker to wake), or
        /// until `until` (uptime ns) when given, then ask again.
        case wait(until: UInt64?)
        /// The scheduler is stopping and nothing is left: the worker exits.
        case exit
    }

    /// How long the oldest client miss may wait before the newest goes first, ns: 250 ms, about
    /// two renders of a phone photo (a screen of misses on 2 workers is served within it).
    static var lifoAfterNanoseconds: UInt64 { 250_000_000 }
    /// How long the pool must have had no client miss nor prefetch item before an idle item
    /// starts, ns: 1 s. A scroll asks for misses or prefetches every fraction of a second; a
    /// backfill render taken in a gap between them held a worker the next miss then waited for.
    static var idleQuietNanoseconds: UInt64 { 1_000_000_000 }

    /// Worker threads.
    let workerCount: Int
    /// Most foreground items that may wait; beyond it `enqueue` refuses (the caller answers 503).
    let foregroundLimit: Int
    /// Most background items running at once, 1...`workerCount`.
    let backgroundConcurrency: Int

    /// Client misses, newest last.
    private var foreground = FIFO<(queuedAt: UInt64, work: Work)>()
    /// Prefetch items by job, sorted, newest group last.
    private var background: [(group: Int, items: FIFO<(key: String?, work: Work)>)] = []
    private var previews = FIFO<Work>(), firstScreenPreviews = FIFO<Work>()
    private var idle = FIFO<Work>()
    private(set) var pace: PrefetchPace
    private var runningForeground = 0, runningBackground = 0, runningPreview = 0, runningIdle = 0
    private var stopping = false
    /// When a client miss or prefetch item was last queued or ended (uptime ns); 0: never.
    private var lastBusy: UInt64 = 0
    /// Workers waiting for work, the most recent last.
    private var parked: [Int] = []

    /// - Parameters:
    ///   - workers: worker threads (≥ 1).
    ///   - foregroundLimit: foreground items allowed to wait.
    ///   - backgroundConcurrency: most background items running at once; 0: every worker.
    ///   - pace: how prefetch keeps pace with its clients.
    init(workers: Int, foregroundLimit: Int, backgroundConcurrency: Int, pace: PrefetchPace) {
        workerCount = max(1, workers)
        self.foregroundLimit = max(1, foregroundLimit)
        self.backgroundConcurrency = backgroundConcurrency > 0 ? min(backgroundConcurrency, workerCount) : workerCount
        self.pace = pace
    }

    /// Queues `work` at `now`. Returns whether it was queued (not when the foreground queue is
    /// full) and a parked worker to wake, if any. `key`: a background item's cache key digest,
    /// so that `clientMissed` can tell when a client reached it before the pool did.
    mutating func enqueue(_ priority: RenderScheduler.Priority, key: String? = nil, _ work: Work,
                          at now: UInt64) -> (queued: Bool, wake: Int?) {
        switch priority {
        case .foreground:
            guard foreground.count < foregroundLimit else { return (false, nil) }
            foreground.push((now, work))
        case .background(let group):
            let ahead: Int
            if let i = background.lastIndex(where: { $0.group == group }) {
                ahead = background[i].items.count
                background[i].items.push((key, work))
            } else {
                ahead = 0
                var items = FIFO<(key: String?, work: Work)>()
                items.push((key, work))
                let position = background.firstIndex { $0.group > group } ?? background.endIndex
                background.insert((group, items), at: position)
            }
            if let key { pace.queued(key, position: ahead, now: now) }
        case .preview(let firstScreens):
            if firstScreens { firstScreenPreviews.push(work) } else { previews.push(work) }
        case .idle:
            idle.push(work)
        }
        if priority.isClientWork { lastBusy = now }
        return (true, parked.popLast())
    }

    /// Drops every queued item of background `group`; returns how many were dropped. Items
    /// already running finish.
    mutating func cancel(group: Int) -> Int {
        guard let i = background.firstIndex(where: { $0.group == group }) else { return 0 }
        let items = background.remove(at: i).items
        for item in items.elements { if let key = item.key { pace.left(key) } }
        return items.count
    }

    /// A client missed `key` at `now`: true when a prefetch item for it was still queued past
    /// its due time (prefetch then catches up, `PrefetchPace`).
    mutating func clientMissed(_ key: String, at now: UInt64) -> Bool {
        pace.clientMissed(key, now: now)
    }

    /// What free worker `worker` does at `now`.
    mutating func take(worker: Int, at now: UInt64) -> Take {
        parked.removeAll { $0 == worker }
        let backgroundMayRun = runningBackground < backgroundConcurrency && !background.isEmpty
        if let work = firstScreenPreviews.pop() {
            runningPreview += 1
            return .run(work, .preview(firstScreens: true))
        }
        // Asked only with a client miss waiting: each call is one pick of the catch-up's cadence.
        let prefetchFirst = !foreground.isEmpty && backgroundMayRun && pace.backgroundGoesFirst(at: now)
        if !prefetchFirst, let oldest = foreground.first {
            let behind = now &- oldest.queuedAt > Self.lifoAfterNanoseconds
            let work = behind ? foreground.popLast()!.work : foreground.pop()!.work
            runningForeground += 1
            return .run(work, .foreground)
        }
        if !prefetchFirst, let work = previews.pop() {
            runningPreview += 1
            return .run(work, .preview(firstScreens: false))
        }
        if backgroundMayRun {
            let last = background.count - 1
            let item = background[last].items.pop()!
            let group = background[last].group
            if background[last].items.isEmpty { background.removeLast() }
            if let key = item.key { pace.left(key) }
            runningBackground += 1
            return .run(item.work, .background(group: group))
        }
        if !stopping, background.isEmpty, previews.isEmpty, firstScreenPreviews.isEmpty, runningIdle == 0, !idle.isEmpty, runningForeground == 0,
           runningBackground == 0, runningPreview == 0 {
            // No client miss waits (else the first branch), nor any preview or prefetch item,
            // and none runs; the last client miss or prefetch item ended a quiet period ago, or
            // it is waited for.
            let quietSince = lastBusy &+ Self.idleQuietNanoseconds
            if lastBusy == 0 || now >= quietSince {
                runningIdle += 1
                return .run(idle.pop()!, .idle)
            }
            parked.append(worker)
            return .wait(until: quietSince)
        }
        if stopping { return .exit }
        parked.append(worker)
        return .wait(until: nil)
    }

    /// An item of `priority` ended at `now` after `took` ns. Returns a parked worker to wake:
    /// a background or idle item may have waited for the slot it held.
    mutating func finished(_ priority: RenderScheduler.Priority, took: UInt64, at now: UInt64) -> Int? {
        switch priority {
        case .foreground: runningForeground -= 1
        case .background: runningBackground -= 1
        case .preview: runningPreview -= 1
        case .idle: runningIdle -= 1
        }
        if priority.isClientWork {
            lastBusy = now
            // Preview reads and idle items (100 px backfill renders) say nothing of how long a
            // thumbnail takes.
            pace.ran(for: took)
        }
        return parked.popLast()
    }

    /// Lets the workers exit once the queues are empty; returns the parked workers to wake.
    mutating func stop() -> [Int] {
        stopping = true
        defer { parked = [] }
        return parked
    }

    /// Items waiting, and items running, in the foreground and background queues.
    var counts: (queuedForeground: Int, queuedBackground: Int, running: Int) {
        (foreground.count, background.reduce(0) { $0 + $1.items.count }, runningForeground + runningBackground)
    }

    /// Idle items waiting and running.
    var idleCounts: (queued: Int, running: Int) { (idle.count, runningIdle) }

    /// Preview items waiting and running.
    var previewCounts: (queued: Int, running: Int) { (previews.count + firstScreenPreviews.count, runningPreview) }
}

extension RenderQueues: Sendable where Work: Sendable {}

