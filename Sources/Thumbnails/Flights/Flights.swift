/// Every miss under way, one flight per cache key, as one state machine: coalescing, each
/// client's deadline, abandonment when every client left, a prefetch item joining a flight or
/// taking over its queued client render, and the end of a flight (answered from disk, rendered
/// and stored, refused, failed).
///
/// A value with no I/O, no locks and no clock of its own: `handle(_:at:)` takes an event and the
/// time (uptime ns) and returns the effects for a driver to perform, in order
/// (`ThumbnailPipeline` is that driver: it holds this value behind one `Mutex` and performs the
/// effects outside it). Generic over what a waiting client (`Client`), a prefetch item
/// (`Prefetch`) and a thumbnail (`Value`) are, so that its tests are tables of plain values.
///
/// A flight's life (`Phase`):
///
/// ```
///            client asks              disk read: not there
///  (none) ──────────────▶ readingDisk ─────────────────────▶ queued ──▶ rendering ──▶ storing ──▶ (none)
///     │                        │ found: every waiter answered     │  came up  ▲   rendered │  stored: prefetches told
///     │ prefetch item          ▼                                  │           │            │
///     └──────────────────▶ rendering ◀── a prefetch item takes ───┘           │            ▼
///                                       the queued client render             failed or refused: (none)
/// ```
///
/// Rules, each in one place here:
/// - Coalescing: a client that asks while a flight is under way waits on it (`coalesced`); one
///   that asks while it is storing gets its thumbnail at once.
/// - Deadlines: each client waits at most `waitNanoseconds` from when it asked (nil: no
///   deadline, `render_timeout_seconds: 0`), then is answered `deadlineExceeded`; one timer per
///   flight, armed for the earliest deadline. The render goes on and is stored: that client will
///   ask again.
/// - Abandonment: a queued client render whose every client left (and none was answered at its
///   deadline, and no prefetch item counts on it) is dropped as it comes up (`abandoned`).
/// - Prefetch: an item for a key under way joins its flight (told when it ends whether the
///   thumbnail was stored); one that finds the flight's client render still queued runs it
///   there and then (its turn came first); one for a key with no flight leads a render of its
///   own, which is stored on disk only (no `Effect.keepInMemory`) until a client joins.
/// - Failures are not remembered here: the flight ends, and the next request tries again
///   (`KnownFailures`, outside, remembers those that lie in the file itself).
struct Flights<Client, Prefetch, Value> {
    typealias Outcome = Result<Value, ThumbnailError>

    /// Where a flight is in its life.
    enum Phase {
        /// Its leader looks the key up on disk (a read that may block, on the disk queue).
        case readingDisk
        /// Its client render waits in the render queue; a prefetch item of the key may take it.
        case queued
        /// A render worker runs its render.
        case rendering
        /// Rendered; its thumbnail is being stored. A client that asks now gets it at once.
        case storing(Value)
    }

    /// A client waiting on a flight.
    struct Waiter {
        /// Unique across flights: the driver's (`Event.clientAsked`).
        let id: UInt64
        let client: Client
        /// When it stops waiting (uptime ns); `.max`: never.
        let deadline: UInt64
    }

    /// A lookup under way for one key.
    struct Flight {
        /// Tells this flight from a later one of the same key (a timer or a queued render
        /// belongs to one).
        let id: UInt64
        var phase: Phase
        var waiters: [Waiter] = []
        /// Whether a client has waited on it: its render then goes to memory as well as disk.
        var forClients: Bool
        /// Whether a client was answered at its deadline: it will ask again, so the render goes
        /// on with no waiter left.
        var answeredAtDeadline = false
        /// Prefetch items that count on it, told when it ends whether its thumbnail was stored.
        var prefetches: [Prefetch] = []
        /// When the armed deadline timer fires (uptime ns); nil when none is armed.
        var timer: UInt64?

        /// A client flight that no one counts on any more: its queued render is dropped.
        var isAbandoned: Bool { forClients && waiters.isEmpty && !answeredAtDeadline && prefetches.isEmpty }
    }

    /// What happens to the flights.
    enum Event {
        /// A client found `key` in neither tier without waiting (`ThumbnailPipeline.cached`):
        /// it leads a new flight, waits on the one under way, or gets a stored one's thumbnail.
        /// `waiter` is unique across flights; `clientLeft` names it.
        case clientAsked(key: String, waiter: UInt64, client: Client)
        /// The client `waiter` went away (its connection closed): it is never answered.
        case clientLeft(key: String, waiter: UInt64)
        /// The deadline timer armed for `flight` (`Effect.armTimer`) fired.
        case timerFired(key: String, flight: UInt64)
        /// The leader's disk lookup (`Effect.readDisk`) ended: the thumbnail, or nil.
        case diskRead(key: String, flight: UInt64, found: Value?)
        /// The render queue refused the flight's render (`Effect.enqueueRender`): it was full.
        case renderRefused(key: String, flight: UInt64)
        /// The flight's queued client render came up on a render worker.
        case renderCameUp(key: String, flight: UInt64)
        /// A prefetch item's turn came (on a render worker), for a key in neither tier.
        case prefetchArrived(key: String, prefetch: Prefetch)
        /// The flight's render (`Effect.render`), or a failure known before it (a remembered
        /// one, a refused source), ended with `outcome`.
        case rendered(key: String, flight: UInt64, outcome: Outcome)
        /// The rendered thumbnail (`Effect.storeOnDisk`) was stored, or not: what that came to for a
        /// prefetch item.
        case stored(key: String, flight: UInt64, outcome: WarmOutcome)
    }

    /// What the driver does, in the order given.
    enum Effect {
        /// Complete these clients with `outcome`.
        case answer([Client], Outcome)
        /// Tell these prefetch items what came of them.
        case tell([Prefetch], WarmOutcome)
        /// Report `timerFired(key, flight)` at `at` (uptime ns).
        case armTimer(key: String, flight: UInt64, at: UInt64)
        /// Look `key` up on disk, then report `diskRead`.
        case readDisk(key: String, flight: UInt64)
        /// Queue the flight's client render (foreground); when the queue refuses it, report
        /// `renderRefused`; when it comes up, report `renderCameUp`.
        case enqueueRender(key: String, flight: UInt64)
        /// Render now, on this worker, then report `rendered`. `forPrefetch`: counted as a
        /// prefetch render (no client waited when it started).
        case render(key: String, flight: UInt64, forPrefetch: Bool)
        /// Keep `value` in the memory tier (a client waited on its render), before the clients
        /// are answered: one that asks again at once finds it there.
        case keepInMemory(key: String, value: Value)
        /// Store `value` on disk, then report `stored`. `inMemory`: `keepInMemory` came first,
        /// so the thumbnail is held even when the disk fails.
        case storeOnDisk(key: String, flight: UInt64, value: Value, inMemory: Bool)
        /// Count a client that joined a flight (`renders.coalesced`).
        case countCoalesced
        /// Count a queued render dropped because every client left (`renders.abandoned`).
        case countAbandoned
        /// Count a render the queue refused (`renders.refused`).
        case countRefused
    }

    /// How long a client waits before it is answered `deadlineExceeded`, ns; nil: no deadline.
    let waitNanoseconds: UInt64?
    private(set) var flights: [String: Flight] = [:]
    private var nextFlight: UInt64 = 1

    /// `waitNanoseconds`: each client's deadline from when it asks (`render_timeout_seconds`);
    /// nil for none.
    init(waitNanoseconds: UInt64?) {
        self.waitNanoseconds = waitNanoseconds
    }

    /// Flights under way (0 when the server is idle).
    var count: Int { flights.count }

    /// The phase of `key`'s flight, or nil when none is under way.
    func phase(of key: String) -> Phase? { flights[key]?.phase }

    /// Applies `event` at `now` (uptime ns) and returns what the driver is to do (an answer or
    /// a telling with no one to tell is left out).
    mutating func handle(_ event: Event, at now: UInt64) -> [Effect] {
        apply(event, at: now).filter { effect in
            switch effect {
            case .answer(let clients, _): !clients.isEmpty
            case .tell(let prefetches, _): !prefetches.isEmpty
            default: true
            }
        }
    }

    private mutating func apply(_ event: Event, at now: UInt64) -> [Effect] {
        switch event {
        case .clientAsked(let key, let waiter, let client):
            return clientAsked(key, waiter: Waiter(id: waiter, client: client, deadline: deadline(from: now)))
        case .clientLeft(let key, let waiter):
            guard var flight = flights[key], !flight.isStoring else { return [] }
            flight.waiters.removeAll { $0.id == waiter }
            flights[key] = flight
            return []
        case .timerFired(let key, let id):
            return timerFired(key, flight: id, at: now)
        case .diskRead(let key, let id, let found):
            guard let flight = flights[key], flight.id == id, case .readingDisk = flight.phase else { return [] }
            guard let found else {
                flights[key]!.phase = .queued
                return [.enqueueRender(key: key, flight: id)]
            }
            flights[key] = nil
            // It was on disk: a prefetch item that joined rendered nothing.
            return [.answer(flight.waiters.map(\.client), .success(found)), .tell(flight.prefetches, .skipped)]
        case .renderRefused(let key, let id):
            guard let flight = flights[key], flight.id == id, case .queued = flight.phase else { return [] }
            flights[key] = nil
            return [.countRefused, .answer(flight.waiters.map(\.client), .failure(.overloaded)),
                    .tell(flight.prefetches, .notStored("the render queue was full"))]
        case .renderCameUp(let key, let id):
            guard let flight = flights[key], flight.id == id, case .queued = flight.phase else { return [] }
            if flight.isAbandoned {
                flights[key] = nil
                return [.countAbandoned]
            }
            flights[key]!.phase = .rendering
            return [.render(key: key, flight: id, forPrefetch: false)]
        case .prefetchArrived(let key, let prefetch):
            return prefetchArrived(key, prefetch)
        case .rendered(let key, let id, let outcome):
            guard var flight = flights[key], flight.id == id, !flight.isStoring else { return [] }
            switch outcome {
            case .success(let value):
                flight.phase = .storing(value)
                let waiters = flight.waiters.map(\.client)
                flight.waiters = []
                flights[key] = flight
                let memory: [Effect] = flight.forClients ? [.keepInMemory(key: key, value: value)] : []
                return memory + [.answer(waiters, outcome),
                                 .storeOnDisk(key: key, flight: id, value: value, inMemory: flight.forClients)]
            case .failure(let error):
                flights[key] = nil
                return [.answer(flight.waiters.map(\.client), outcome), .tell(flight.prefetches, Self.warmOutcome(of: error))]
            }
        case .stored(let key, let id, let outcome):
            guard let flight = flights[key], flight.id == id, flight.isStoring else { return [] }
            flights[key] = nil
            return [.tell(flight.prefetches, outcome)]
        }
    }

    /// What a failed lookup comes to for a prefetch item: `.failed` when the source could not
    /// be rendered, `.notStored` when the render never ran.
    static func warmOutcome(of error: ThumbnailError) -> WarmOutcome {
        switch error {
        case .render: .failed
        case .overloaded: .notStored("the render queue was full")
        case .deadlineExceeded: .notStored("the render outlived its deadline")
        }
    }

    private func deadline(from now: UInt64) -> UInt64 {
        guard let waitNanoseconds else { return .max }
        let (sum, overflow) = now.addingReportingOverflow(waitNanoseconds)
        return overflow || sum == .max ? .max - 1 : sum
    }

    private mutating func clientAsked(_ key: String, waiter: Waiter) -> [Effect] {
        guard var flight = flights[key] else {
            let id = takeFlightID()
            var flight = Flight(id: id, phase: .readingDisk, waiters: [waiter], forClients: true)
            let timer = Self.armIfNeeded(&flight, key: key, for: waiter)
            flights[key] = flight
            return [.readDisk(key: key, flight: id)] + timer
        }
        if case .storing(let value) = flight.phase {
            return [.countCoalesced, .answer([waiter.client], .success(value))]
        }
        flight.waiters.append(waiter)
        flight.forClients = true
        let timer = Self.armIfNeeded(&flight, key: key, for: waiter)
        flights[key] = flight
        return [.countCoalesced] + timer
    }

    /// Arms the flight's timer for `waiter` unless one is armed (it re-arms itself for later
    /// waiters when it fires).
    private static func armIfNeeded(_ flight: inout Flight, key: String, for waiter: Waiter) -> [Effect] {
        guard flight.timer == nil, waiter.deadline != .max else { return [] }
        flight.timer = waiter.deadline
        return [.armTimer(key: key, flight: flight.id, at: waiter.deadline)]
    }

    /// Answers, with `deadlineExceeded`, the waiters whose own deadline has passed; the flight
    /// goes on, and the timer is armed again for the earliest deadline left.
    private mutating func timerFired(_ key: String, flight id: UInt64, at now: UInt64) -> [Effect] {
        guard var flight = flights[key], flight.id == id, !flight.isStoring else { return [] }
        let expired = flight.waiters.filter { $0.deadline <= now }
        flight.waiters.removeAll { $0.deadline <= now }
        if !expired.isEmpty { flight.answeredAtDeadline = true }
        let earliest = flight.waiters.map(\.deadline).min()
        flight.timer = earliest == .max ? nil : earliest
        flights[key] = flight
        var effects: [Effect] = []
        if let next = flight.timer { effects.append(.armTimer(key: key, flight: id, at: next)) }
        if !expired.isEmpty { effects.append(.answer(expired.map(\.client), .failure(.deadlineExceeded))) }
        return effects
    }

    private mutating func prefetchArrived(_ key: String, _ prefetch: Prefetch) -> [Effect] {
        guard var flight = flights[key] else {
            let id = takeFlightID()
            flights[key] = Flight(id: id, phase: .rendering, forClients: false, prefetches: [prefetch])
            return [.render(key: key, flight: id, forPrefetch: true)]
        }
        flight.prefetches.append(prefetch)
        let takesQueuedRender: Bool
        if case .queued = flight.phase { takesQueuedRender = true } else { takesQueuedRender = false }
        if takesQueuedRender { flight.phase = .rendering }
        flights[key] = flight
        // A client waits on the render it takes: counted as a client render.
        return takesQueuedRender ? [.render(key: key, flight: flight.id, forPrefetch: false)] : []
    }

    private mutating func takeFlightID() -> UInt64 {
        defer { nextFlight &+= 1 }
        return nextFlight
    }
}

extension Flights.Flight {
    var isStoring: Bool {
        if case .storing = phase { return true }
        return false
    }
}

extension Flights.Effect: Equatable where Client: Equatable, Prefetch: Equatable, Value: Equatable {}
extension Flights: Sendable where Client: Sendable, Prefetch: Sendable, Value: Sendable {}
extension Flights.Flight: Sendable where Client: Sendable, Prefetch: Sendable, Value: Sendable {}
extension Flights.Phase: Sendable where Value: Sendable {}
extension Flights.Waiter: Sendable where Client: Sendable {}
extension Flights.Event: Sendable where Client: Sendable, Prefetch: Sendable, Value: Sendable {}
extension Flights.Effect: Sendable where Client: Sendable, Prefetch: Sendable, Value: Sendable {}
