/// The change feed's long-polls (`GET /assets/changes?since=G&wait=S`, docs/API.md, "Change
/// feed") as a state machine: a request whose `since` is the current generation is parked until
/// the generation moves or its wait ends, at most `limit` at once. Fed events with the time
/// (uptime ns, from the driver's injected `UptimeClock`), it returns effects; the driver
/// (`ThumbService+Changes.swift`) holds it behind one `Mutex`, performs them outside it, and
/// keeps each parked request's completion by its waiter number. No thread waits: a parked
/// request is a completion not yet called, as a miss waiting for its render is (`Flights`).
struct ListingWaiters: Sendable {
    /// Whether requests may still be parked: `closed` once the server shuts down (every parked
    /// request was answered, and new ones are answered at once).
    enum Phase: Sendable, Equatable {
        case open
        case closed
    }

    enum Event: Sendable, Equatable {
        /// Request `waiter` asks for the changes since `since`, while the generation is
        /// `generation` (read under the driver's lock, so no move can slip between), waiting
        /// until `deadline` (uptime ns) at most.
        case asked(waiter: Int, since: Int, generation: Int, deadline: UInt64)
        /// The listing's generation is now `generation` (`LibraryIndex.onGenerationChange`).
        case generationMoved(to: Int)
        /// The timer armed for `waiter` fired.
        case timerFired(waiter: Int)
        /// The client of `waiter` went away (its connection closed): it is answered by nobody.
        case clientLeft(waiter: Int)
        /// The server is shutting down.
        case shutDown
    }

    enum Effect: Sendable, Equatable {
        /// Answer these requests with the changes as they are now (none, if the generation did
        /// not move: their wait ended).
        case answer([Int])
        /// Answer this request 503 `too_many_waiters`: `limit` requests are parked already.
        case refuse(Int)
        /// Call back with `timerFired(waiter)` at `deadline` (uptime ns).
        case armTimer(waiter: Int, at: UInt64)
    }

    /// Most requests parked at once (`ThumbService.maxListingWaiters`).
    let limit: Int
    private(set) var phase = Phase.open
    /// Each parked request: the generation it asked from and when its wait ends (uptime ns).
    private(set) var parked: [Int: (since: Int, deadline: UInt64)] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Feeds `event`, at `now` (uptime ns); returns what to do, in order.
    mutating func handle(_ event: Event, at now: UInt64) -> [Effect] {
        switch event {
        case .asked(let waiter, let since, let generation, let deadline):
            if phase == .closed || since != generation || deadline <= now { return [.answer([waiter])] }
            guard parked.count < limit else { return [.refuse(waiter)] }
            parked[waiter] = (since, deadline)
            return [.armTimer(waiter: waiter, at: deadline)]
        case .generationMoved(let generation):
            let moved = parked.filter { $0.value.since != generation }.keys.sorted()
            for waiter in moved { parked[waiter] = nil }
            return moved.isEmpty ? [] : [.answer(moved)]
        case .timerFired(let waiter):
            guard let wait = parked[waiter] else { return [] }   // answered already
            guard wait.deadline <= now else { return [.armTimer(waiter: waiter, at: wait.deadline)] }
            parked[waiter] = nil
            return [.answer([waiter])]
        case .clientLeft(let waiter):
            parked[waiter] = nil
            return []
        case .shutDown:
            phase = .closed
            let all = parked.keys.sorted()
            parked = [:]
            return all.isEmpty ? [] : [.answer(all)]
        }
    }
}
