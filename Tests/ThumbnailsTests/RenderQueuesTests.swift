import Testing
@testable import Thumbnails

/// The render scheduler's decisions alone (`RenderQueues`), with work items as strings and the
/// time passed by hand: which item a free worker takes, when it waits and whom to wake. No
/// threads, no sleeps.
@Suite struct RenderQueuesTests {
    typealias Queues = RenderQueues<String>
    static let ms: UInt64 = 1_000_000

    /// Queues on `workers` workers with the default 100 ms render time and 100 ms slack.
    func queues(workers: Int = 1, foregroundLimit: Int = 1024, backgroundConcurrency: Int = 0) -> Queues {
        Queues(workers: workers, foregroundLimit: foregroundLimit, backgroundConcurrency: backgroundConcurrency,
               pace: PrefetchPace(workers: workers))
    }

    /// What worker `worker` takes at `at` ms: the item's name, "wait" (until woken), "wait until
    /// N" (ms), or "exit". An item taken is finished at once (it took `took` ms) unless `keep`.
    func take(_ q: inout Queues, worker: Int = 0, at: UInt64, took: UInt64 = 100, keep: Bool = false) -> String {
        switch q.take(worker: worker, at: at * Self.ms) {
        case .run(let work, let priority):
            if !keep { _ = q.finished(priority, took: took * Self.ms, at: (at + took) * Self.ms) }
            return work
        case .wait(let until): return until.map { "wait until \($0 / Self.ms)" } ?? "wait"
        case .exit: return "exit"
        }
    }

    @Test func clientMissesFirstThenTheNewestJobFirst() {
        var q = queues()
        _ = q.enqueue(.background(group: 1), key: "k1", "job1-a", at: 0)
        _ = q.enqueue(.background(group: 2), key: "k2", "job2-a", at: 0)
        _ = q.enqueue(.foreground, "miss-a", at: 0)
        _ = q.enqueue(.background(group: 1), key: "k3", "job1-b", at: 0)
        _ = q.enqueue(.foreground, "miss-b", at: 1)
        let order = (0..<6).map { _ in take(&q, at: 10, took: 0) }
        #expect(order == ["miss-a", "miss-b", "job2-a", "job1-a", "job1-b", "wait"])
    }

    @Test func clientMissesRunOldestFirstUntilTheOldestWaitedTooLong() {
        var q = queues()
        for (i, name) in ["a", "b", "c", "d"].enumerated() { _ = q.enqueue(.foreground, name, at: UInt64(i) * Self.ms) }
        #expect(take(&q, at: 250, took: 0) == "a")   // a waited 250 ms: not yet past the limit
        #expect(take(&q, at: 251, took: 0) == "b")   // b waited 250 ms
        #expect(take(&q, at: 253, took: 0) == "d")   // c waited 251 ms: the newest goes first
        #expect(take(&q, at: 253, took: 0) == "c")
    }

    @Test func prefetchKeepsToItsShareOfTheWorkers() {
        var q = queues(workers: 2, backgroundConcurrency: 1)
        _ = q.enqueue(.background(group: 1), "p1", at: 0)
        _ = q.enqueue(.background(group: 1), "p2", at: 0)
        #expect(take(&q, worker: 0, at: 0, keep: true) == "p1")
        #expect(take(&q, worker: 1, at: 0, keep: true) == "wait")   // p2 waits for p1's slot
        // p1 ends: the parked worker is woken for p2.
        #expect(q.finished(.background(group: 1), took: 100 * Self.ms, at: 100 * Self.ms) == 1)
        #expect(take(&q, worker: 1, at: 100, keep: true) == "p2")
        #expect(queues(workers: 2, backgroundConcurrency: 5).backgroundConcurrency == 2)
        #expect(queues(workers: 2).backgroundConcurrency == 2)
    }

    @Test func prefetchBehindItsClientCatchesUpTwoItemsPerClientMiss() {
        var q = queues()
        // Four items queued at 0: the second is due at 2 × 100 ms + 100 ms slack = 300 ms.
        for i in 1...4 { _ = q.enqueue(.background(group: 1), key: "k\(i)", "p\(i)", at: 0) }
        #expect(q.clientMissed("k2", at: 300 * Self.ms) == false)   // not late yet
        #expect(q.clientMissed("k2", at: 301 * Self.ms) == true)
        #expect(q.pace.lateMisses == 1)
        _ = q.enqueue(.foreground, "m1", at: 301 * Self.ms)
        _ = q.enqueue(.foreground, "m2", at: 301 * Self.ms)
        let order = (0..<6).map { _ in take(&q, at: 302, took: 0) }
        #expect(order == ["p1", "p2", "m1", "p3", "p4", "m2"])
        // The catch-up lasts one second after the late miss.
        #expect(q.pace.catchingUp(at: 1300 * Self.ms))
        #expect(!q.pace.catchingUp(at: 1301 * Self.ms))
    }

    @Test func clientMissesStayFirstWhilePrefetchKeepsPace() {
        var q = queues()
        for i in 1...2 { _ = q.enqueue(.background(group: 1), key: "k\(i)", "p\(i)", at: 0) }
        #expect(q.clientMissed("k2", at: 250 * Self.ms) == false)
        _ = q.enqueue(.foreground, "m1", at: 250 * Self.ms)
        #expect(take(&q, at: 250, took: 0) == "m1")
    }

    @Test func idleWorkWaitsForAQuietSecondAndRunsOneAtATime() {
        var q = queues(workers: 2)
        _ = q.enqueue(.foreground, "miss", at: 10 * Self.ms)
        _ = q.enqueue(.idle, "idle-1", at: 10 * Self.ms)
        _ = q.enqueue(.idle, "idle-2", at: 10 * Self.ms)
        #expect(take(&q, worker: 0, at: 10, took: 100) == "miss")   // ends at 110 ms
        #expect(take(&q, worker: 0, at: 500) == "wait until 1110")
        #expect(take(&q, worker: 0, at: 1110, keep: true) == "idle-1")
        #expect(take(&q, worker: 1, at: 1110) == "wait")   // one idle item at a time
        // A miss that comes meanwhile wakes the parked worker and runs at once.
        #expect(q.enqueue(.foreground, "miss-2", at: 1150 * Self.ms).wake == 1)
        #expect(take(&q, worker: 1, at: 1150, took: 50) == "miss-2")
        #expect(q.finished(.idle, took: 200 * Self.ms, at: 1300 * Self.ms) == nil)
        // The quiet second counts from the miss's end (1200 ms).
        #expect(take(&q, worker: 0, at: 1300) == "wait until 2200")
        #expect(take(&q, worker: 0, at: 2200) == "idle-2")
        #expect(q.idleCounts == (0, 0))
    }

    /// Previews run after client misses and before prefetch, without waiting for a quiet pool;
    /// prefetch catching up goes before them; idle work waits for them; those of the first
    /// screens go before client misses.
    @Test func previewsComeAfterClientMissesAndBeforePrefetch() {
        var q = queues(workers: 2)
        _ = q.enqueue(.idle, "idle", at: 0)
        _ = q.enqueue(.background(group: 1), key: "k1", "p1", at: 0)
        for name in ["preview-1", "preview-2", "preview-3"] { _ = q.enqueue(.preview(firstScreens: false), name, at: 0) }
        _ = q.enqueue(.foreground, "miss", at: 0)
        #expect(take(&q, worker: 0, at: 0, keep: true) == "miss")
        #expect(take(&q, worker: 1, at: 0, keep: true) == "preview-1")
        _ = q.finished(.foreground, took: 10 * Self.ms, at: 10 * Self.ms)
        #expect(take(&q, worker: 0, at: 10, keep: true) == "preview-2")
        #expect(q.previewCounts == (1, 2))
        _ = q.finished(.preview(firstScreens: false), took: 2 * Self.ms, at: 12 * Self.ms)
        #expect(take(&q, worker: 1, at: 12) == "preview-3")
        _ = q.finished(.preview(firstScreens: false), took: 2 * Self.ms, at: 12 * Self.ms)
        #expect(take(&q, worker: 0, at: 12) == "p1")   // ends at 112 ms
        // The previews are done; idle work waits for a quiet second after the prefetch item.
        #expect(take(&q, worker: 0, at: 112) == "wait until 1112")
        #expect(take(&q, worker: 0, at: 1112) == "idle")

        // Prefetch behind its client goes before previews, as before client misses.
        var late = queues()
        for i in 1...2 { _ = late.enqueue(.background(group: 1), key: "k\(i)", "p\(i)", at: 0) }
        _ = late.enqueue(.preview(firstScreens: false), "preview", at: 0)
        #expect(late.clientMissed("k2", at: 301 * Self.ms) == true)
        _ = late.enqueue(.foreground, "miss", at: 301 * Self.ms)
        #expect((0..<4).map { _ in take(&late, at: 302, took: 0) } == ["p1", "p2", "miss", "preview"])

        // The previews of a grid's first screens go before client misses.
        var cold = queues(workers: 2)
        _ = cold.enqueue(.foreground, "miss", at: 0)
        _ = cold.enqueue(.preview(firstScreens: false), "later-preview", at: 0)
        for name in ["first-1", "first-2", "first-3"] { _ = cold.enqueue(.preview(firstScreens: true), name, at: 0) }
        #expect(take(&cold, worker: 0, at: 0, keep: true) == "first-1")
        #expect(take(&cold, worker: 1, at: 0, keep: true) == "first-2")
        _ = cold.finished(.preview(firstScreens: true), took: 2 * Self.ms, at: 2 * Self.ms)
        #expect((0..<3).map { _ in take(&cold, worker: 0, at: 2, took: 0) } == ["first-3", "miss", "later-preview"])
    }

    @Test func aFullForegroundQueueRefuses() {
        var q = queues(foregroundLimit: 2)
        #expect(q.enqueue(.foreground, "a", at: 0).queued)
        #expect(q.enqueue(.foreground, "b", at: 0).queued)
        #expect(!q.enqueue(.foreground, "c", at: 0).queued)
        #expect(q.enqueue(.background(group: 1), "p", at: 0).queued)   // prefetch has no such limit
        #expect(q.counts == (2, 1, 0))
    }

    @Test func cancellingAGroupDropsItsQueuedItemsAndTheirPace() {
        var q = queues()
        _ = q.enqueue(.background(group: 4), key: "k1", "a", at: 0)
        _ = q.enqueue(.background(group: 4), key: "k2", "b", at: 0)
        _ = q.enqueue(.background(group: 5), key: "k3", "c", at: 0)
        #expect(q.cancel(group: 4) == 2)
        #expect(q.cancel(group: 4) == 0)
        #expect(q.clientMissed("k2", at: 10_000 * Self.ms) == false)   // gone: never late
        #expect(take(&q, at: 0, took: 0) == "c")
        #expect(take(&q, at: 0) == "wait")
    }

    @Test func parkedWorkersAreWokenOneByOneAndExitWhenStoppedAndEmpty() {
        var q = queues(workers: 2)
        #expect(take(&q, worker: 0, at: 0) == "wait")
        #expect(take(&q, worker: 1, at: 0) == "wait")
        #expect(q.enqueue(.foreground, "a", at: 0).wake == 1)   // the most recently parked
        #expect(q.enqueue(.foreground, "b", at: 0).wake == 0)
        #expect(q.enqueue(.foreground, "c", at: 0).wake == nil)   // none left parked
        #expect(take(&q, worker: 1, at: 0, keep: true) == "a")
        #expect(q.stop().isEmpty)
        // Stopping lets the queued items run first.
        #expect(take(&q, worker: 0, at: 0) == "b")
        #expect(take(&q, worker: 0, at: 0) == "c")
        #expect(take(&q, worker: 0, at: 0) == "exit")
    }
}
