import Foundation
import Synchronization

/// A bounded pool of render worker threads fed from two queues: foreground work (client misses)
/// always runs first, oldest first until misses fall behind (below); background work (prefetch)
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
/// Dedicated threads, not Dispatch: a libvips render blocks its thread for tens of ms.
/// Thread-safe: queues and counters sit behind one `NSCondition`.
public final class RenderScheduler: @unchecked Sendable {
    /// Where a work item goes.
    public enum Priority: Sendable, Equatable {
        case foreground
        /// Prefetch work of one job; higher `group` numbers are newer and run first.
        case background(group: Int)
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
    private var background: [(group: Int, items: FIFO<@Sendable () -> Void>)] = []  // sorted, newest group last
    private var runningForeground = 0
    private var runningBackground = 0
    private var stopping = false

    /// Starts `workers` threads (0 = one per core).
    /// - Parameters:
    ///   - foregroundLimit: foreground items allowed to wait (default 1,024).
    ///   - backgroundConcurrency: most background items running at once (0, the default: every
    ///     worker); at most `workers`.
    public init(workers: Int = 0, foregroundLimit: Int = 1024, backgroundConcurrency: Int = 0) {
        workerCount = workers > 0 ? workers : max(1, ProcessInfo.processInfo.activeProcessorCount)
        self.foregroundLimit = max(1, foregroundLimit)
        self.backgroundConcurrency = backgroundConcurrency > 0 ? min(backgroundConcurrency, workerCount) : workerCount
        for index in 0..<workerCount {
            let thread = Thread { [self] in run() }
            thread.name = "thumbd-render-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Queues `work`. Returns false, without queueing, when the foreground queue is full.
    @discardableResult
    public func enqueue(_ priority: Priority, _ work: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        switch priority {
        case .foreground:
            guard foreground.count < foregroundLimit else { return false }
            foreground.push((DispatchTime.now().uptimeNanoseconds, work))
        case .background(let group):
            if let i = background.lastIndex(where: { $0.group == group }) {
                background[i].items.push(work)
            } else {
                var items = FIFO<@Sendable () -> Void>()
                items.push(work)
                let position = background.firstIndex { $0.group > group } ?? background.endIndex
                background.insert((group, items), at: position)
            }
        }
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
        return background.remove(at: i).items.count
    }

    /// Items waiting, and items running, in each queue.
    public var counts: (queuedForeground: Int, queuedBackground: Int, running: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (foreground.count, background.reduce(0) { $0 + $1.items.count },
                runningForeground + runningBackground)
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
            var next: (work: @Sendable () -> Void, isBackground: Bool)?
            while next == nil {
                if let oldest = foreground.first {
                    let behind = DispatchTime.now().uptimeNanoseconds &- oldest.queuedAt > Self.lifoAfterNanoseconds
                    let work = behind ? foreground.popLast()!.work : foreground.pop()!.work
                    next = (work, false)
                    runningForeground += 1
                } else if runningBackground < backgroundConcurrency, !background.isEmpty {
                    let last = background.count - 1
                    next = (background[last].items.pop()!, true)
                    if background[last].items.isEmpty { background.removeLast() }
                    runningBackground += 1
                } else if stopping {
                    condition.unlock()
                    return
                } else {
                    condition.wait()
                }
            }
            condition.unlock()
            next!.work()
            condition.lock()
            if next!.isBackground { runningBackground -= 1 } else { runningForeground -= 1 }
            condition.signal()  // a background item may have been waiting for a slot
            condition.unlock()
        }
    }
}
