import Foundation
import Synchronization
import Testing
@testable import Thumbnails

@Suite struct RenderSchedulerTests {
    /// Blocks the workers until released, then records the order items ran in.
    final class Gate: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        let done = DispatchGroup()
    }

    @Test func foregroundRunsBeforeQueuedBackgroundAndNewestJobFirst() {
        let scheduler = RenderScheduler(workers: 1)
        let gate = Gate()
        gate.done.enter()
        scheduler.enqueue(.foreground) { gate.semaphore.wait(); gate.done.leave() }  // occupies the worker
        for (name, priority) in [("old-1", RenderScheduler.Priority.background(group: 1)), ("old-2", .background(group: 1)),
                                 ("new-1", .background(group: 2)), ("fg", .foreground)] {
            gate.done.enter()
            scheduler.enqueue(priority) { gate.order.withLock { $0.append(name) }; gate.done.leave() }
        }
        gate.semaphore.signal()
        gate.done.wait()
        #expect(gate.order.withLock { $0 } == ["fg", "new-1", "old-1", "old-2"])
        scheduler.stop()
    }

    /// The order three client misses queued behind a busy worker run in, when the worker is
    /// held `holdMicroseconds` after they were queued.
    func clientMissOrder(holdMicroseconds: UInt32) -> [String] {
        let scheduler = RenderScheduler(workers: 1)
        defer { scheduler.stop() }
        let gate = Gate()
        gate.done.enter()
        scheduler.enqueue(.foreground) { gate.semaphore.wait(); gate.done.leave() }  // occupies the worker
        for name in ["first", "second", "third"] {
            gate.done.enter()
            scheduler.enqueue(.foreground) { gate.order.withLock { $0.append(name) }; gate.done.leave() }
        }
        usleep(holdMicroseconds)
        gate.semaphore.signal()
        gate.done.wait()
        return gate.order.withLock { $0 }
    }

    @Test func clientMissesRunOldestFirstWhileTheyKeepUp() {
        #expect(clientMissOrder(holdMicroseconds: 0) == ["first", "second", "third"])
    }

    @Test func clientMissesRunNewestFirstOnceTheOldestWaitedTooLong() {
        // Past RenderQueues<Int>.lifoAfterNanoseconds (250 ms).
        #expect(clientMissOrder(holdMicroseconds: 400_000) == ["third", "second", "first"])
    }

    /// The most background items that ran at once when `count` were queued on `scheduler`,
    /// with a foreground item queued while they were stuck (it must find its worker then).
    func backgroundPeak(_ scheduler: RenderScheduler, count: Int) -> (peak: Int, foregroundRanWhileStuck: Bool) {
        let release = DispatchSemaphore(value: 0)
        let running = Mutex(0), peak = Mutex(0)
        let started = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for _ in 0..<count {
            done.enter()
            scheduler.enqueue(.background(group: 1)) {
                let now = running.withLock { $0 += 1; return $0 }
                peak.withLock { $0 = max($0, now) }
                started.signal()
                release.wait()
                running.withLock { $0 -= 1 }
                done.leave()
            }
        }
        for _ in 0..<min(count, scheduler.backgroundConcurrency) { started.wait() }
        let foreground = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) { foreground.signal() }
        let ranWhileStuck = foreground.wait(timeout: .now() + 0.5) == .success
        for _ in 0..<count { release.signal() }
        done.wait()
        _ = foreground.wait(timeout: .now() + 5)
        return (peak.withLock { $0 }, ranWhileStuck)
    }

    @Test func backgroundWorkUsesEveryWorkerByDefault() {
        let scheduler = RenderScheduler(workers: 2)
        #expect(scheduler.backgroundConcurrency == 2)
        let (peak, ranWhileStuck) = backgroundPeak(scheduler, count: 4)
        #expect(peak == 2)
        #expect(!ranWhileStuck)   // both workers were on prefetch: the client miss waited for one
        scheduler.stop()
    }

    @Test func backgroundWorkKeepsToItsShare() {
        let scheduler = RenderScheduler(workers: 2, backgroundConcurrency: 1)
        #expect(RenderScheduler(workers: 2, backgroundConcurrency: 5).backgroundConcurrency == 2)
        let (peak, ranWhileStuck) = backgroundPeak(scheduler, count: 4)
        #expect(peak == 1)
        #expect(ranWhileStuck)   // a foreground item still gets the free worker
        scheduler.stop()
    }

    /// The order a client miss and six prefetch items (keys k0...k5 of one job) run in behind a
    /// busy worker, when a client missed `missed` before they ran.
    func catchUpOrder(missed: String?, renderNanoseconds: UInt64) -> [String] {
        let scheduler = RenderScheduler(workers: 1, lateSlackNanoseconds: 0, renderNanoseconds: renderNanoseconds)
        defer { scheduler.stop() }
        let gate = Gate()
        let started = DispatchSemaphore(value: 0)
        gate.done.enter()
        scheduler.enqueue(.foreground) { started.signal(); gate.semaphore.wait(); gate.done.leave() }  // occupies the worker
        started.wait()
        func queue(_ name: String, _ priority: RenderScheduler.Priority, key: String? = nil) {
            gate.done.enter()
            scheduler.enqueue(priority, key: key) { gate.order.withLock { $0.append(name) }; gate.done.leave() }
        }
        for i in 0..<6 { queue("k\(i)", .background(group: 1), key: "k\(i)") }
        usleep(20_000)
        if let missed { scheduler.clientMissed(missed) }
        queue("f1", .foreground)
        gate.semaphore.signal()
        gate.done.wait()
        return gate.order.withLock { $0 }
    }

    @Test func prefetchBehindItsClientCatchesUpTwoItemsPerClientMiss() {
        // k0 was due 1 ms after it was queued; the client asked for it 20 ms later.
        #expect(catchUpOrder(missed: "k0", renderNanoseconds: 1_000_000) == ["k0", "k1", "f1", "k2", "k3", "k4", "k5"])
    }

    @Test func clientMissesStayFirstWhilePrefetchKeepsPace() {
        // Due 1 s after queueing: the client's miss 20 ms later is not late.
        #expect(catchUpOrder(missed: "k0", renderNanoseconds: 1_000_000_000) == ["f1", "k0", "k1", "k2", "k3", "k4", "k5"])
        // A miss for a key no job has queued changes nothing either.
        #expect(catchUpOrder(missed: "elsewhere", renderNanoseconds: 1_000_000) == ["f1", "k0", "k1", "k2", "k3", "k4", "k5"])
    }

    @Test func cancellingAGroupDropsItsQueuedItems() {
        let scheduler = RenderScheduler(workers: 1)
        let hold = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        scheduler.enqueue(.foreground) { hold.wait() }
        for _ in 0..<10 { scheduler.enqueue(.background(group: 7)) { ran.withLock { $0 += 1 } } }
        #expect(scheduler.counts.queuedBackground == 10)
        #expect(scheduler.cancel(group: 7) == 10)
        #expect(scheduler.counts.queuedBackground == 0)
        hold.signal()
        let after = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) { after.signal() }
        after.wait()
        #expect(ran.withLock { $0 } == 0)
        scheduler.stop()
    }

    @Test func aFullForegroundQueueRefuses() {
        let scheduler = RenderScheduler(workers: 1, foregroundLimit: 2)
        let hold = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) { started.signal(); hold.wait() }
        started.wait()
        #expect(scheduler.enqueue(.foreground) {})
        #expect(scheduler.enqueue(.foreground) {})
        #expect(!scheduler.enqueue(.foreground) {})
        hold.signal()
        scheduler.stop()
    }
}
