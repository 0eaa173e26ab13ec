import Rendering
import Testing
@testable import Thumbnails

/// The miss state machine alone (`Flights`): tables of events at given times and the effects
/// each must give, with clients, prefetch items and thumbnails as strings. No threads, no
/// sleeps, no libvips, no disk.
@Suite struct FlightsTests {
    typealias Machine = Flights<String, String, String>
    typealias Event = Machine.Event
    typealias Effect = Machine.Effect

    /// One row: at `ms` milliseconds, `event` gives exactly `effects`.
    struct Step {
        let ms: UInt64
        let event: Event
        let effects: [Effect]
        init(_ ms: UInt64, _ event: Event, _ effects: [Effect]) {
            self.ms = ms
            self.event = event
            self.effects = effects
        }
    }

    /// Runs `steps` in order on a machine whose clients wait `waitMs` (nil: no deadline),
    /// checking each row's effects; returns the machine for further checks.
    @discardableResult
    func run(_ steps: [Step], waitMs: UInt64? = 30_000, sourceLocation: SourceLocation = #_sourceLocation) -> Machine {
        var machine = Machine(waitNanoseconds: waitMs.map { $0 * 1_000_000 })
        for (row, step) in steps.enumerated() {
            let effects = machine.handle(step.event, at: step.ms * 1_000_000)
            #expect(effects == step.effects, "row \(row): \(step.event)", sourceLocation: sourceLocation)
        }
        return machine
    }

    let k = "key"
    static let failure = RenderError(kind: .unsupportedSource, message: "not an image")
    func ms(_ value: UInt64) -> UInt64 { value * 1_000_000 }

    @Test func clientsOfOneKeyShareOneFlightAndOneRender() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(5, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),   // the timer is armed already
            Step(8, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(9, .clientAsked(key: k, waiter: 3, client: "c"), [.countCoalesced]),
            Step(20, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(60, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .answer(["a", "b", "c"], .success("t")),
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
            // While it is stored, a client gets it at once.
            Step(61, .clientAsked(key: k, waiter: 4, client: "d"), [.countCoalesced, .answer(["d"], .success("t"))]),
            Step(62, .stored(key: k, flight: 1, outcome: .done), []),
            // The flight has ended: the next client leads a new one.
            Step(70, .clientAsked(key: k, waiter: 5, client: "e"), [.readDisk(key: k, flight: 2), .armTimer(key: k, flight: 2, at: ms(30_070))]),
        ])
        #expect(machine.count == 1)
    }

    @Test func aDiskHitAnswersEveryWaiterAndTellsPrefetchesItWasSkipped() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .prefetchArrived(key: k, prefetch: "p"), []),   // joins: the read is under way
            Step(2, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),
            Step(3, .diskRead(key: k, flight: 1, found: "t"), [.answer(["a", "b"], .success("t")), .tell(["p"], .skipped)]),
            Step(4, .timerFired(key: k, flight: 1), []),   // the ended flight's timer does nothing
        ])
        #expect(machine.count == 0)
    }

    @Test func eachClientGetsItsOwnDeadlineAndTheRenderGoesOn() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(100))]),
            Step(1, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(2, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(30, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),
            // a's deadline: a is answered 503, the timer re-armed for b's, 30 ms later.
            Step(100, .timerFired(key: k, flight: 1), [.armTimer(key: k, flight: 1, at: ms(130)), .answer(["a"], .failure(.deadlineExceeded))]),
            Step(130, .timerFired(key: k, flight: 1), [.answer(["b"], .failure(.deadlineExceeded))]),
            // The render ends with no one waiting: still kept in memory (clients asked; they
            // will ask again) and stored.
            Step(400, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
            Step(401, .stored(key: k, flight: 1, outcome: .done), []),
        ], waitMs: 100)
        #expect(machine.count == 0)
    }

    @Test func aTimerFiredEarlyAnswersNoOneAndStaysArmed() {
        run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(100))]),
            Step(99, .timerFired(key: k, flight: 1), [.armTimer(key: k, flight: 1, at: ms(100))]),
            Step(100, .timerFired(key: k, flight: 1), [.answer(["a"], .failure(.deadlineExceeded))]),
        ], waitMs: 100)
    }

    @Test func withNoDeadlineNoTimerIsEverArmed() {
        // render_timeout_seconds: 0.
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1)]),
            Step(1, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(3_600_000, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .answer(["a", "b"], .success("t")),
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
        ], waitMs: nil)
        #expect(machine.phase(of: k).map { if case .storing("t") = $0 { true } else { false } } == true)
    }

    @Test func aQueuedRenderWhoseClientsAllLeftIsDroppedAsItComesUp() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .clientLeft(key: k, waiter: 1), []),
            Step(4, .clientLeft(key: k, waiter: 2), []),
            Step(5, .renderCameUp(key: k, flight: 1), [.countAbandoned]),
            Step(6, .timerFired(key: k, flight: 1), []),
        ])
        #expect(machine.count == 0)
    }

    @Test func aQueuedRenderRunsForTheClientThatStayed() {
        run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .clientAsked(key: k, waiter: 2, client: "b"), [.countCoalesced]),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .clientLeft(key: k, waiter: 1), []),
            Step(5, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .answer(["b"], .success("t")),
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
        ])
    }

    @Test func aRenderIsNotDroppedWhenAClientAnsweredAtItsDeadlineWillAskAgain() {
        run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(100))]),
            Step(1, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(100, .timerFired(key: k, flight: 1), [.answer(["a"], .failure(.deadlineExceeded))]),
            Step(200, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
        ], waitMs: 100)
    }

    @Test func aRenderIsNotDroppedWhenAPrefetchItemCountsOnIt() {
        // The item joins while the disk is read; after the read the render is queued, and the
        // clients leave: the item's own turn has passed, so the queued render runs for it.
        run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .prefetchArrived(key: k, prefetch: "p"), []),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .clientLeft(key: k, waiter: 1), []),
            Step(4, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
            Step(10, .stored(key: k, flight: 1, outcome: .done), [.tell(["p"], .done)]),
        ])
    }

    @Test func aPrefetchItemTakesOverAQueuedClientRender() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            // Its turn comes before the client render's: it runs that render here, for the client.
            Step(2, .prefetchArrived(key: k, prefetch: "p"), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(3, .renderCameUp(key: k, flight: 1), []),   // taken: nothing to run
            Step(4, .renderRefused(key: k, flight: 1), []),   // nor to refuse
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .answer(["a"], .success("t")),
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
            Step(10, .stored(key: k, flight: 1, outcome: .notStored("disk full")), [.tell(["p"], .notStored("disk full"))]),
        ])
        #expect(machine.count == 0)
    }

    @Test func aPrefetchItemAloneRendersToDiskOnlyUntilAClientJoins() {
        run([
            Step(0, .prefetchArrived(key: k, prefetch: "p"), [.render(key: k, flight: 1, forPrefetch: true)]),
            Step(1, .prefetchArrived(key: k, prefetch: "q"), []),   // another job's item joins
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: false),
            ]),
            Step(10, .stored(key: k, flight: 1, outcome: .done), [.tell(["p", "q"], .done)]),
        ])
        run([
            Step(0, .prefetchArrived(key: k, prefetch: "p"), [.render(key: k, flight: 1, forPrefetch: true)]),
            Step(5, .clientAsked(key: k, waiter: 1, client: "a"), [.countCoalesced, .armTimer(key: k, flight: 1, at: ms(30_005))]),
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [
                .keepInMemory(key: k, value: "t"), .answer(["a"], .success("t")),
                .storeOnDisk(key: k, flight: 1, value: "t", inMemory: true),
            ]),
        ])
    }

    @Test func aFailedRenderEndsTheFlightAndIsNotRemembered() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .prefetchArrived(key: k, prefetch: "p"), []),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .renderCameUp(key: k, flight: 1), [.render(key: k, flight: 1, forPrefetch: false)]),
            Step(9, .rendered(key: k, flight: 1, outcome: .failure(.render(Self.failure))), [
                .answer(["a"], .failure(.render(Self.failure))), .tell(["p"], .failed),
            ]),
            Step(10, .clientAsked(key: k, waiter: 2, client: "b"), [.readDisk(key: k, flight: 2), .armTimer(key: k, flight: 2, at: ms(30_010))]),
        ])
        #expect(machine.count == 1)
    }

    @Test func aFullRenderQueueAnswersOverloaded() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .prefetchArrived(key: k, prefetch: "p"), []),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(2, .renderRefused(key: k, flight: 1), [
                .countRefused, .answer(["a"], .failure(.overloaded)), .tell(["p"], .notStored("the render queue was full")),
            ]),
        ])
        #expect(machine.count == 0)
    }

    @Test func eventsOfAnEndedFlightChangeNothing() {
        let machine = run([
            Step(0, .clientAsked(key: k, waiter: 1, client: "a"), [.readDisk(key: k, flight: 1), .armTimer(key: k, flight: 1, at: ms(30_000))]),
            Step(1, .clientLeft(key: k, waiter: 1), []),
            Step(2, .diskRead(key: k, flight: 1, found: nil), [.enqueueRender(key: k, flight: 1)]),
            Step(3, .renderCameUp(key: k, flight: 1), [.countAbandoned]),
            Step(4, .clientAsked(key: k, waiter: 2, client: "b"), [.readDisk(key: k, flight: 2), .armTimer(key: k, flight: 2, at: ms(30_004))]),
            // Flight 1's timer, queued render, read and render are stale for flight 2.
            Step(5, .timerFired(key: k, flight: 1), []),
            Step(6, .renderCameUp(key: k, flight: 1), []),
            Step(7, .diskRead(key: k, flight: 1, found: "old"), []),
            Step(8, .rendered(key: k, flight: 1, outcome: .success("old")), []),
            Step(9, .stored(key: k, flight: 1, outcome: .done), []),
            Step(10, .clientLeft(key: k, waiter: 1), []),
            // Flight 1's queued render comes up while flight 2's waits in the queue: not run.
            Step(11, .diskRead(key: k, flight: 2, found: nil), [.enqueueRender(key: k, flight: 2)]),
            Step(12, .renderCameUp(key: k, flight: 1), []),
        ])
        #expect(machine.count == 1)
        #expect(machine.phase(of: k).map { if case .queued = $0 { true } else { false } } == true)
    }

    @Test func aClientLeavingOnceTheRenderEndedChangesNothing() {
        // Leaving once the thumbnail is being stored changes nothing: it was answered already.
        run([
            Step(0, .prefetchArrived(key: k, prefetch: "p"), [.render(key: k, flight: 1, forPrefetch: true)]),
            Step(9, .rendered(key: k, flight: 1, outcome: .success("t")), [.storeOnDisk(key: k, flight: 1, value: "t", inMemory: false)]),
            Step(9, .clientAsked(key: k, waiter: 1, client: "a"), [.countCoalesced, .answer(["a"], .success("t"))]),
            Step(9, .clientLeft(key: k, waiter: 1), []),
            Step(10, .stored(key: k, flight: 1, outcome: .done), [.tell(["p"], .done)]),
        ])
    }

    @Test func keysHaveFlightsOfTheirOwn() {
        let machine = run([
            Step(0, .clientAsked(key: "x", waiter: 1, client: "a"), [.readDisk(key: "x", flight: 1), .armTimer(key: "x", flight: 1, at: ms(30_000))]),
            Step(1, .clientAsked(key: "y", waiter: 2, client: "b"), [.readDisk(key: "y", flight: 2), .armTimer(key: "y", flight: 2, at: ms(30_001))]),
            Step(2, .diskRead(key: "y", flight: 2, found: "ty"), [.answer(["b"], .success("ty"))]),
            Step(3, .diskRead(key: "x", flight: 2, found: "ty"), []),   // another key's flight number
        ])
        #expect(machine.count == 1)
    }
}
