import Foundation
import Synchronization
import Testing
@testable import Thumbnails

/// The idle queue (`RenderScheduler.Priority.idle`, the placeholder backfill): it starts an item
/// only while no client miss and no prefetch item waits or runs, a quiet second after the last
/// one, and one at a time.
@Suite struct IdleSchedulingTests {
    @Test func idleRunsAfterEveryClientMissAndPrefetchItem() {
        let scheduler = RenderScheduler(workers: 1)
        defer { scheduler.stop() }
        let release = DispatchSemaphore(value: 0), done = DispatchGroup()
        let order = Mutex<[String]>([])
        done.enter()
        scheduler.enqueue(.foreground) { release.wait(); done.leave() }   // occupies the worker
        for (name, priority) in [("idle-1", RenderScheduler.Priority.idle), ("prefetch", .background(group: 1)),
                                 ("idle-2", .idle), ("miss", .foreground)] {
            done.enter()
            scheduler.enqueue(priority) { order.withLock { $0.append(name) }; done.leave() }
        }
        #expect(scheduler.idleCounts == (queued: 2, running: 0))
        release.signal()
        done.wait()
        #expect(order.withLock { $0 } == ["miss", "prefetch", "idle-1", "idle-2"])
    }

    /// With workers to spare, still one idle item at a time; a client miss queued while it runs
    /// starts at once on another worker.
    @Test func oneIdleItemAtATimeAndAMissDoesNotWaitForIt() {
        let scheduler = RenderScheduler(workers: 2)
        defer { scheduler.stop() }
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), done = DispatchGroup()
        let peak = Mutex((now: 0, most: 0))
        for _ in 0..<3 {
            done.enter()
            scheduler.enqueue(.idle) {
                peak.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                started.signal()
                release.wait()
                peak.withLock { $0.now -= 1 }
                done.leave()
            }
        }
        started.wait()
        let missRan = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) { missRan.signal() }
        #expect(missRan.wait(timeout: .now() + 5) == .success)   // while the idle item still holds its worker
        for _ in 0..<3 { release.signal() }
        done.wait()
        #expect(peak.withLock { $0.most } == 1)
    }

    /// A scroll's misses come a fraction of a second apart: an idle item starts only once the
    /// pool has had none for `idleQuietNanoseconds`, so it never takes a worker in a gap. (A
    /// lower bound on time: a loaded machine can only make it later.)
    @Test func anIdleItemWaitsForAQuietSecondAfterTheLastMiss() {
        let scheduler = RenderScheduler(workers: 2)
        defer { scheduler.stop() }
        let missEnded = Mutex<UInt64>(0), idleStarted = DispatchSemaphore(value: 0)
        let missDone = DispatchSemaphore(value: 0)
        scheduler.enqueue(.foreground) {
            missEnded.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
            missDone.signal()
        }
        missDone.wait()
        let startedAt = Mutex<UInt64>(0)
        scheduler.enqueue(.idle) {
            startedAt.withLock { $0 = DispatchTime.now().uptimeNanoseconds }
            idleStarted.signal()
        }
        #expect(idleStarted.wait(timeout: .now() + 10) == .success)
        let quiet = startedAt.withLock { $0 } &- missEnded.withLock { $0 }
        #expect(quiet >= RenderQueues<Int>.idleQuietNanoseconds - 50_000_000, "started \(Double(quiet) / 1e6) ms after the miss")
    }
}
