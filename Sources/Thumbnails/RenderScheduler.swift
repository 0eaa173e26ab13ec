import Foundation
import Synchronization
import Locking

/// A bounded pool of render worker threads fed from three queues, client misses first, then
/// placeholders from embedded previews, then prefetch by job, with idle work when nothing else
/// waits; which item runs next is decided by `RenderQueues` (the rules, and where they come
/// from, are written there). This class only runs those decisions: its threads take items, run
/// them, report them done, and park until woken.
/// Dedicated threads, not Dispatch: a libvips render blocks its thread for tens of ms.
/// Thread-safe: the queues sit behind one `Mutex`; each worker parks on a semaphore of its own,
/// which `RenderQueues` says when to signal.
public final class RenderScheduler: Sendable {
    /// Where a work item goes.
    public enum Priority: Sendable, Equatable {
        case foreground
        /// Prefetch work of one job; higher `group` numbers are newer and run first.
        case background(group: Int)
        /// A placeholder read from a photo's embedded preview (`PreviewPlaceholders`): after
        /// client misses, before prefetch; those of a grid's first
        /// screens (`firstScreens`) before client misses (`RenderQueues`).
        case preview(firstScreens: Bool)
        /// Work for no one waiting (the placeholder backfill): starts only while no client miss
        /// and no prefetch item waits or runs, and none has for `idleQuietNanoseconds`, one at a
        /// time, so a miss that comes meanwhile finds the other workers free and waits at most
        /// for it on a one-worker pool, and a client scrolling through misses meets none.
        case idle

        /// Whether a client is served by it (a miss, or prefetch ahead of its scroll): what
        /// keeps idle work waiting, and what the pace of prefetch is measured on.
        var isClientWork: Bool {
            switch self {
            case .foreground, .background: true
            case .preview, .idle: false
            }
        }
    }

    /// Number of worker threads (default: one per core).
    public let workerCount: Int
    /// Most foreground items that may wait; beyond it `enqueue` refuses (the caller answers 503).
    public var foregroundLimit: Int { queues.withLock { $0.foregroundLimit } }
    /// Most background items running at once, 1...`workerCount`.
    public let backgroundConcurrency: Int

    private let queues: Mutex<RenderQueues<@Sendable () -> Void>>
    /// One per worker: signalled to wake it (`RenderQueues` names which).
    private let wakeups: [DispatchSemaphore]
    private let clock: any UptimeClock

    /// Starts `workers` threads (0 = one per core).
    /// - Parameters:
    ///   - foregroundLimit: foreground items allowed to wait (default 1,024).
    ///   - backgroundConcurrency: most background items running at once (0, the default: every
    ///     worker); at most `workers`.
    ///   - lateSlackNanoseconds: how late past its place in the queue a prefetch item may be
    ///     before a client miss for it starts catching up (default 100 ms; `PrefetchPace`).
    ///   - renderNanoseconds: the render time assumed until one is measured (default 100 ms).
    ///   - clock: the system's uptime by default.
    public init(workers: Int = 0, foregroundLimit: Int = 1024, backgroundConcurrency: Int = 0,
                lateSlackNanoseconds: UInt64 = 100_000_000,
                renderNanoseconds: UInt64 = 100_000_000, clock: any UptimeClock = SystemUptimeClock()) {
        workerCount = workers > 0 ? workers : max(1, ProcessInfo.processInfo.activeProcessorCount)
        let pace = PrefetchPace(workers: workerCount, slackNanoseconds: lateSlackNanoseconds,
                                renderNanoseconds: renderNanoseconds)
        let queues = RenderQueues<@Sendable () -> Void>(workers: workerCount, foregroundLimit: foregroundLimit,
                                                       backgroundConcurrency: backgroundConcurrency, pace: pace)
        self.backgroundConcurrency = queues.backgroundConcurrency
        self.queues = Mutex(queues)
        wakeups = (0..<workerCount).map { _ in DispatchSemaphore(value: 0) }
        self.clock = clock
        for index in 0..<workerCount {
            let thread = Thread { [self] in run(worker: index) }
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
        let (queued, wake) = queues.withLock { $0.enqueue(priority, key: key, work, at: clock.now()) }
        if let wake { wakeups[wake].signal() }
        return queued
    }

    /// Drops every queued item of background `group`; returns how many were dropped. Items
    /// already running finish.
    @discardableResult
    public func cancel(group: Int) -> Int {
        queues.withLock { $0.cancel(group: group) }
    }

    /// A client missed the thumbnail with digest `key` (neither cache had it). Returns true when a
    /// prefetch item for it was still queued past its due time: prefetch is behind its client,
    /// and catches up (`PrefetchPace`).
    @discardableResult
    public func clientMissed(_ key: String) -> Bool {
        queues.withLock { $0.clientMissed(key, at: clock.now()) }
    }

    /// Client misses that found their prefetch item late, since start; and whether the pool is
    /// catching up now.
    public var prefetchPace: (lateMisses: Int, catchingUp: Bool) {
        queues.withLock { ($0.pace.lateMisses, $0.pace.catchingUp(at: clock.now())) }
    }

    /// Items waiting, and items running, in the foreground and background queues (idle items:
    /// `idleCounts`).
    public var counts: (queuedForeground: Int, queuedBackground: Int, running: Int) {
        queues.withLock { $0.counts }
    }

    /// Idle items waiting and running.
    public var idleCounts: (queued: Int, running: Int) {
        queues.withLock { $0.idleCounts }
    }

    /// Preview items waiting and running.
    public var previewCounts: (queued: Int, running: Int) {
        queues.withLock { $0.previewCounts }
    }

    /// Lets the workers exit once the queues are empty.
    public func stop() {
        for worker in queues.withLock({ $0.stop() }) { wakeups[worker].signal() }
    }

    private func run(worker: Int) {
        ThreadRole.current = .renderWorker
        while true {
            switch queues.withLock({ $0.take(worker: worker, at: clock.now()) }) {
            case .run(let work, let priority):
                let started = clock.now()
                work()
                let ended = clock.now()
                let wake = queues.withLock { $0.finished(priority, took: ended &- started, at: ended) }
                if let wake { wakeups[wake].signal() }
            case .wait(let until):
                if let until {
                    _ = wakeups[worker].wait(timeout: .now() + clock.interval(until: until))
                } else {
                    wakeups[worker].wait()
                }
            case .exit:
                return
            }
        }
    }
}
