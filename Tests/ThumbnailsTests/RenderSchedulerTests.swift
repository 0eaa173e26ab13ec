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

    @Test func backgroundWorkNeverTakesEveryWorker() {
        let scheduler = RenderScheduler(workers: 2)
        #expect(scheduler.backgroundConcurrency == 1)
        let release = DispatchSemaphore(value: 0)
        let running = Mutex(0), peak = Mutex(0)
        let done = DispatchGroup()
        for _ in 0..<4 {
            done.enter()
            scheduler.enqueue(.background(group: 1)) {
                let now = running.withLock { $0 += 1; return $0 }
                peak.withLock { $0 = max($0, now) }
                release.wait()
                running.withLock { $0 -= 1 }
                done.leave()
            }
        }
        // A foreground item still gets the free worker while background work is stuck.
        let foreground = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) { foreground.signal() }
        #expect(foreground.wait(timeout: .now() + 5) == .success)
        for _ in 0..<4 { release.signal() }
        done.wait()
        #expect(peak.withLock { $0 } == 1)
        scheduler.stop()
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
