import Testing
@testable import ThumbServer

/// The change feed's long-polls as a table (`ListingWaiters`): events in at a time, effects out;
/// no clock but the numbers given, no sleeps.
@Suite struct ListingWaitersTests {
    typealias Event = ListingWaiters.Event
    typealias Effect = ListingWaiters.Effect

    /// Feeds `steps` (event, time, effects expected) to one machine of `limit` waiters.
    static func run(limit: Int = 2, _ steps: [(Event, UInt64, [Effect])]) {
        var waiters = ListingWaiters(limit: limit)
        for (n, (event, time, expected)) in steps.enumerated() {
            #expect(waiters.handle(event, at: time) == expected, "step \(n): \(event)")
        }
    }

    @Test func aRequestForTheCurrentGenerationParksUntilItMoves() {
        Self.run([
            (.asked(waiter: 1, since: 7, generation: 7, deadline: 100), 10, [.armTimer(waiter: 1, at: 100)]),
            (.asked(waiter: 2, since: 6, generation: 7, deadline: 100), 10, [.answer([2])]),   // moved already
            (.generationMoved(to: 8), 20, [.answer([1])]),
            (.timerFired(waiter: 1), 100, []),   // answered already
        ])
    }

    @Test func aWaitEndsAtItsDeadlineNotBefore() {
        Self.run([
            (.asked(waiter: 1, since: 7, generation: 7, deadline: 100), 10, [.armTimer(waiter: 1, at: 100)]),
            (.timerFired(waiter: 1), 99, [.armTimer(waiter: 1, at: 100)]),   // early: armed again
            (.timerFired(waiter: 1), 100, [.answer([1])]),
            (.asked(waiter: 2, since: 7, generation: 7, deadline: 100), 100, [.answer([2])]),   // no wait left
        ])
    }

    @Test func pastTheLimitRequestsAreRefusedAndALeaverFreesItsPlace() {
        Self.run([
            (.asked(waiter: 1, since: 7, generation: 7, deadline: 100), 0, [.armTimer(waiter: 1, at: 100)]),
            (.asked(waiter: 2, since: 7, generation: 7, deadline: 100), 0, [.armTimer(waiter: 2, at: 100)]),
            (.asked(waiter: 3, since: 7, generation: 7, deadline: 100), 0, [.refuse(3)]),
            (.clientLeft(waiter: 1), 1, []),
            (.asked(waiter: 4, since: 7, generation: 7, deadline: 100), 1, [.armTimer(waiter: 4, at: 100)]),
            (.timerFired(waiter: 1), 100, []),   // left: answered by nobody
            (.generationMoved(to: 8), 2, [.answer([2, 4])]),
        ])
    }

    @Test func shutdownAnswersEveryWaiterAndParksNoMore() {
        Self.run([
            (.asked(waiter: 1, since: 7, generation: 7, deadline: 100), 0, [.armTimer(waiter: 1, at: 100)]),
            (.asked(waiter: 2, since: 7, generation: 7, deadline: 100), 0, [.armTimer(waiter: 2, at: 100)]),
            (.shutDown, 5, [.answer([1, 2])]),
            (.asked(waiter: 3, since: 7, generation: 7, deadline: 100), 6, [.answer([3])]),
            (.generationMoved(to: 8), 7, []),
        ])
    }
}
