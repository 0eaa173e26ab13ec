import Foundation
import Synchronization

/// A bounded pool of render worker threads fed from two queues: foreground work (client misses)
/// runs first (unless prefetch is catching up, below), oldest first until misses fall behind
/// (below); background work (prefetch)
/// is grouped by job, the newest group first, and runs on at most `backgroundConcurrency`
/// workers at once (all by default: a client miss that finds every worker on prefetch starts
/// when the first of them finishes, within one render).
///
/// Client misses follow the adaptive LIFO of Facebook's "Fail at Scale" (CACM 2016): first in,
/// first out while the oldest has waited less than `lifoAfterNanoseconds` (a screen's worth of
/// misses comes out top to bottom), last in, first out once it has waited longer (a grid
/// scrolled faster than renders keep up with: the newest miss is the cell that has just appeared
/// and stays on screen longest, while the oldest belong to cells about to scroll away, whose
/// clients leave and whose renders are then dropped, `ThumbnailPipeline.abandon`). Measured with
/// `Tests/Benchmarks/scroll.sh --quick` at the saturating speed: first in, first out drew 54 of
/// 117 cells for 95 renders, last in, first out 95 of 129 for 95; but plain LIFO left the first
/// screen's top row, asked first, to the last. An old miss waits at most its client's
/// `render_timeout_seconds`, then gets 503.
/// Prefetch that falls behind the scroll (a client misses an item its job still has queued,
/// later than the pool should have reached it) catches up: for a second, two prefetch items run
/// for each client miss (`PrefetchPace`).
/// Dedicated threads, not Dispatch: a libvips render blocks its thread for tens of ms.
/// Thread-safe: queues and counters sit behind one `NSCondition`.
public final class RenderScheduler: @unchecked Sendable {
    /// Where a work item goes.
    public enum Priority: Sendable, Equatable {
        case foreground
        /// Prefetch work of one job; higher `group` numbers are newer and run first.
        case background(group: Int)
        /// Work for no one waiting (the placeholder backfill): starts only while no client miss
        /// and no prefetch item waits or runs, and none has for `idleQuietNanoseconds`, one at a
        /// time, so a miss that comes meanwhile finds the other workers free and waits at most
        /// for it on a one-worker pool, and a client scrolling through misses meets none.
        case idle
    }

    /// Number of worker threads (default: one per core).
    public let workerCount: Int
    /// Most foreground items that may wait; beyond it `enqueue` refuses (the caller answers 503).
    public let foregroundLimit: Int
    /// Most background items running at once, 1...`workerCount`.
    public let backgroundConcurrency: Int

    private let condition = NSCondition()
    // Guarded by `condition`:
    /// Client misses, newest last (taken from the end).
    private var foreground = FIFO<(queuedAt: UInt64, work: @Sendable () -> Void)>()
    /// How long the oldest client miss may wait before the newest goes first, ns: 250 ms, about
    /// two renders of a phone photo (a screen of misses on 2 workers is served within it).
    static let lifoAfterNanoseconds: UInt64 = 250_000_000
    private var background: [(group: Int, items: FIFO<BackgroundItem>)] = []  // sorted, newest group last
    private typealias BackgroundItem = (key: String?, work: @Sendable () -> Void)
    private var idle = FIFO<@Sendable () -> Void>()
    private var pace: PrefetchPace
    private var runningForeground = 0
    private var runningBackground = 0
    private var runningIdle = 0
    private var stopping = false
    /// When a client miss or prefetch item was last queued or ended (uptime ns).
    private var lastBusy: UInt64 = 0
    /// How long the pool must have had no client miss nor prefetch item before an idle item
    /// starts, ns: 1 s. A scroll asks for misses or prefetches every fraction of a second; a
    /// backfill render taken in a gap between them held a worker the next miss then waited
    /// for (the scroll benchmark's first screens took 100-180 ms longer with the backfill on).
    static let idleQuietNanoseconds: UInt64 = 1_000_000_000

    /// Starts `workers` threads (0 = one per core).
    /// - Parameters:
    ///   - foregroundLimit: foreground items allowed to wait (default 1,024).
    ///   - backgroundConcurrency: most background items running at once (0, the default: every
    ///     worker); at most `workers`.
    ///   - lateSlackNanoseconds: how late past its place in the queue a prefetch item may be
    ///     before a client miss for it starts catching up (default 100 ms; `PrefetchPace`).
    ///   - renderNanoseconds: the render time assumed until one is measured (default 100 ms).
    public init(workers: Int = 0, foregroundLimit: Int = 1024, backgroundConcurrency: Int = 0,
                lateSlackNanoseconds: UInt64 = 100_000_000,
                renderNanoseconds: UInt64 = 100_000_000) {
        workerCount = workers > 0 ? workers : max(1, ProcessInfo.processInfo.activeProcessorCount)
        self.foregroundLimit = max(1, foregroundLimit)
        self.backgroundConcurrency = backgroundConcurrency > 0 ? min(backgroundConcurrency, workerCount) : workerCount
        pace = PrefetchPace(workers: workerCount, slackNanoseconds: lateSlackNanoseconds,
                            renderNanoseconds: renderNanoseconds)
        for index in 0..<workerCount {
            let thread = Thread { [self] in run() }
            thread.name = "thumbd-render-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Queues `work`. Returns false, without queueing, when the foreground queue is full.
    /// `key` (a background item's cache key digest) lets `clientMissed(_:)` tell when a client
    /// reached the item before the pool did.
    @discardableResult
    public func enqueue(_ priority: Priority, key: String? = nil, _ work: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        switch priority {
        case .foreground:
            guard foreground.count < foregroundLimit else { return false }
            foreground.push((DispatchTime.now().uptimeNanoseconds, work))
        case .background(let group):
            let ahead: Int
            if let i = background.lastIndex(where: { $0.group == group }) {
                ahead = background[i].items.count
                background[i].items.push((key, work))
            } else {
                ahead = 0
                var items = FIFO<BackgroundItem>()
                items.push((key, work))
                let position = background.firstIndex { $0.group > group } ?? background.endIndex
                background.insert((group, items), at: position)
            }
            if let key { pace.queued(key, position: ahead, now: DispatchTime.now().uptimeNanoseconds) }
        case .idle:
            idle.push(work)
        }
        if priority != .idle { lastBusy = DispatchTime.now().uptimeNanoseconds }
        condition.signal()
        return true
    }

    /// Drops every queued item of background `group`; returns how many were dropped. Items
    /// already running finish.
    @discardableResult
    public func cancel(group: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        guard let i = background.firstIndex(where: { $0.group == group }) else { return 0 }
        let items = background.remove(at: i).items
        for item in items.elements { if let key = item.key { pace.left(key) } }
        return items.count
    }

    /// A client missed the thumbnail with digest `key` (neither cache had it). Returns true when a
    /// prefetch item for it was still queued past its due time: prefetch is behind its client,
    /// and catches up (`PrefetchPace`).
    @discardableResult
    public func clientMissed(_ key: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return pace.clientMissed(key, now: DispatchTime.now().uptimeNanoseconds)
    }

    /// Client misses that found their prefetch item late, since start; and whether the pool is
    /// catching up now.
    public var prefetchPace: (lateMisses: Int, catchingUp: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (pace.lateMisses, pace.catchingUp(at: DispatchTime.now().uptimeNanoseconds))
    }

    /// Items waiting, and items running, in the foreground and background queues (idle items:
    /// `idleCounts`).
    public var counts: (queuedForeground: Int, queuedBackground: Int, running: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (foreground.count, background.reduce(0) { $0 + $1.items.count },
                runningForeground + runningBackground)
    }

    /// Idle items waiting and running.
    public var idleCounts: (queued: Int, running: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (idle.count, runningIdle)
    }

    /// Lets the workers exit once the queues are empty.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            var next: (work: @Sendable () -> Void, priority: Priority)?
            while next == nil {
                let now = DispatchTime.now().uptimeNanoseconds
                let backgroundMayRun = runningBackground < backgroundConcurrency && !background.isEmpty
                if let oldest = foreground.first,
                   !(backgroundMayRun && pace.backgroundGoesFirst(at: now)) {
                    let behind = now &- oldest.queuedAt > Self.lifoAfterNanoseconds
                    let work = behind ? foreground.popLast()!.work : foreground.pop()!.work
                    next = (work, .foreground)
                    runningForeground += 1
                } else if backgroundMayRun {
                    let last = background.count - 1
                    let item = background[last].items.pop()!
                    if background[last].items.isEmpty { background.removeLast() }
                    if let key = item.key { pace.left(key) }
                    next = (item.work, .background(group: 0))
                    runningBackground += 1
                } else if !stopping, background.isEmpty, runningIdle == 0, !idle.isEmpty,
                          runningForeground == 0, runningBackground == 0 {
                    // No client miss waits (else the first branch), nor any prefetch item, and
                    // none runs; the last one ended a quiet period ago, or it is waited for.
                    let quietSince = lastBusy &+ Self.idleQuietNanoseconds
                    if lastBusy == 0 || now >= quietSince {
                        next = (idle.pop()!, .idle)
                        runningIdle += 1
                    } else {
                        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(quietSince - now) / 1e9))
                    }
                } else if stopping {
                    condition.unlock()
                    return
                } else {
                    condition.wait()
                }
            }
            condition.unlock()
            let started = DispatchTime.now().uptimeNanoseconds
            next!.work()
            let took = DispatchTime.now().uptimeNanoseconds &- started
            condition.lock()
            switch next!.priority {
            case .foreground: runningForeground -= 1
            case .background: runningBackground -= 1
            case .idle: runningIdle -= 1
            }
            if next!.priority != .idle { lastBusy = DispatchTime.now().uptimeNanoseconds }
            // Idle items (100 px backfill renders) say nothing of how long a thumbnail takes.
            if next!.priority != .idle { pace.ran(for: took) }
            condition.signal()  // a background or idle item may have been waiting for a slot
            condition.unlock()
        }
    }
}
