import Testing
@testable import Thumbnails

@Suite struct PrefetchPaceTests {
    let ms: UInt64 = 1_000_000

    @Test func aClientMissIsLateOnlyPastTheItemsPlaceInTheQueue() {
        // 2 workers at 100 ms a render: the third item of a job (2 ahead) is due 150 ms after it
        // was queued, plus 100 ms of slack.
        var pace = PrefetchPace(workers: 2, slackNanoseconds: 100 * ms, renderNanoseconds: 100 * ms)
        pace.queued("c", position: 2, now: 1_000 * ms)
        let late1 = pace.clientMissed("c", now: 1_250 * ms)
        #expect(!late1)
        #expect(!pace.catchingUp(at: 1_250 * ms))
        let late2 = pace.clientMissed("c", now: 1_251 * ms)
        #expect(late2)
        #expect(pace.lateMisses == 1)
        let late3 = pace.clientMissed("other", now: 1_300 * ms)
        #expect(!late3)   // never queued for prefetch
        #expect(pace.lateMisses == 1)
    }

    @Test func catchingUpLastsASecondAfterTheLastLateMiss() {
        var pace = PrefetchPace(workers: 1, slackNanoseconds: 0, renderNanoseconds: 10 * ms)
        pace.queued("a", position: 0, now: 0)
        pace.queued("b", position: 1, now: 0)
        let late4 = pace.clientMissed("a", now: 500 * ms)
        #expect(late4)
        #expect(pace.catchingUp(at: 1_499 * ms))
        let late5 = pace.clientMissed("b", now: 1_200 * ms)
        #expect(late5)   // renews it
        #expect(pace.catchingUp(at: 2_199 * ms))
        #expect(!pace.catchingUp(at: 2_200 * ms))
    }

    @Test func anItemThatLeftTheQueueIsNeverLate() {
        var pace = PrefetchPace(workers: 1, slackNanoseconds: 0, renderNanoseconds: 10 * ms)
        pace.queued("a", position: 0, now: 0)
        #expect(pace.queuedCount == 1)
        pace.left("a")
        #expect(pace.queuedCount == 0)
        let late6 = pace.clientMissed("a", now: 10_000 * ms)
        #expect(!late6)
        #expect(pace.lateMisses == 0)
    }

    @Test func whileCatchingUpTwoPrefetchItemsRunForEachClientMiss() {
        var pace = PrefetchPace(workers: 2, slackNanoseconds: 0, renderNanoseconds: 10 * ms)
        func picks(at now: UInt64) -> [Bool] {
            var picks: [Bool] = []
            for _ in 0..<6 { picks.append(pace.backgroundGoesFirst(at: now)) }
            return picks
        }
        #expect(picks(at: 0) == Array(repeating: false, count: 6))
        pace.queued("a", position: 0, now: 0)
        let late7 = pace.clientMissed("a", now: 100 * ms)
        #expect(late7)
        #expect(picks(at: 200 * ms) == [true, true, false, true, true, false])
        let after = pace.backgroundGoesFirst(at: 1_100 * ms)
        #expect(!after)
    }

    @Test func theRenderTimeIsAMovingAverageOfRendersOnly() {
        var pace = PrefetchPace(workers: 1, slackNanoseconds: 0, renderNanoseconds: 100 * ms)
        pace.ran(for: 1 * ms)   // a skipped item: not a render
        #expect(pace.renderNanoseconds == 100 * ms)
        pace.ran(for: 20 * ms)  // (7 * 100 + 20) / 8
        #expect(pace.renderNanoseconds == 90 * ms)
        // The next item queued is due one (new) render time later.
        pace.queued("a", position: 0, now: 0)
        let late8 = pace.clientMissed("a", now: 90 * ms)
        #expect(!late8)
        let late9 = pace.clientMissed("a", now: 90 * ms + 1)
        #expect(late9)
    }
}
