import Dispatch
import HTTP
import Library
import Synchronization
import Thumbnails

/// `GET /assets/changes?since=G&sort=newest|oldest&wait=S` (docs/API.md, "Change feed"): what
/// changed in the listing the client sees (its `Client.scope`, in `sort`) since generation `G`
/// (`LibraryIndex.changes`), at once when the generation moved, else after holding the request
/// up to `S` seconds (a long-poll) until it moves. The waits are `ListingWaiters`' state; this is
/// its driver: the state and the parked requests behind one `Mutex` (`changeFeed`), effects
/// performed outside it, timers on a Dispatch queue at the injected clock's deadlines.
extension ThumbService {
    /// Most requests parked at once (a 503 `too_many_waiters` past it): 1,000. Each is a
    /// connection held open, so `max_connections` bounds them first on a small server.
    static let maxListingWaiters = 1000
    /// Longest `wait`: 60 s (a proxy in front may close sooner: nginx's `proxy_read_timeout` is 60 s).
    static let maxChangesWaitSeconds = 60

    /// A parked request: what it asked, and where its answer goes.
    struct ParkedChanges: Sendable {
        let since: Int
        let order: ListingOrder
        let scope: LibraryScope
        /// The settings the request read (`answer`): its items are written by them, even when a
        /// reload comes while it waits.
        let configuration: ServiceConfiguration
        let completion: @Sendable (HTTPResponse) -> Void
    }

    /// The waits' state and the parked requests, together (one lock: the state machine's
    /// numbers and the completions they stand for never disagree).
    struct ChangeFeed: Sendable {
        var waiters = ListingWaiters(limit: ThumbService.maxListingWaiters)
        var parked: [Int: ParkedChanges] = [:]
    }

    /// `configuration`: the settings the request read (`answer`).
    func respondWithChanges(to request: HTTPRequest, for client: Client, _ configuration: ServiceConfiguration,
                            completion: @escaping @Sendable (HTTPResponse) -> Void) {
        let query = request.query
        let order: ListingOrder
        do {
            try QueryParameters.check(query, known: QueryParameters.changes, of: "/assets/changes")
            order = try ListingOrder(query: query)
        } catch {
            return completion(error.response)
        }
        let since: Int, wait: Int
        do {
            since = try Negotiation.queryInteger("since", in: query, default: nil, range: 0...Int.max,
                                                 what: "a listing's generation, a whole number")
            wait = try Negotiation.queryInteger("wait", in: query, default: 0, range: 0...Self.maxChangesWaitSeconds,
                                                what: "a whole number of seconds")
        } catch {
            return completion(error.response)
        }
        guard index.isComplete else { return completion(APIError.indexBuilding.response) }
        let asked = ParkedChanges(since: since, order: order, scope: client.scope, configuration: configuration,
                                  completion: completion)
        let waiter = nextListingWaiter.wrappingAdd(1, ordering: .relaxed).oldValue
        let now = clock.now()
        let effects = changeFeed.withLock { feed in
            // The generation read under this lock: a move after it is fed after this event.
            let effects = feed.waiters.handle(.asked(waiter: waiter, since: since, generation: index.generation,
                                                     deadline: now + UInt64(wait) * 1_000_000_000), at: now)
            if case .armTimer = effects.first { feed.parked[waiter] = asked }
            return effects
        }
        if case .armTimer = effects.first {
            request.clientAbort.onAbort { [weak self] in self?.handleListingWaiters(.clientLeft(waiter: waiter)) }
        }
        perform(effects, asked: [waiter: asked])
    }

    /// Feeds `event` to the waits at the clock's time and performs what it leads to.
    func handleListingWaiters(_ event: ListingWaiters.Event) {
        let (effects, answered) = changeFeed.withLock { feed in
            let effects = feed.waiters.handle(event, at: clock.now())
            var answered: [Int: ParkedChanges] = [:]
            for case .answer(let waiters) in effects {
                for waiter in waiters { answered[waiter] = feed.parked.removeValue(forKey: waiter) }
            }
            if case .clientLeft(let waiter) = event { feed.parked[waiter] = nil }
            return (effects, answered)
        }
        perform(effects, asked: answered)
    }

    /// How many requests to the change feed wait now (parked, not yet answered).
    public var waitingChangeRequests: Int { changeFeed.withLock { $0.parked.count } }

    /// Answers every parked request (as if its wait ended) and answers new ones at once: for
    /// `Thumbd.shutdown`, before the server drains its connections.
    public func stopListingWaiters() {
        handleListingWaiters(.shutDown)
    }

    /// Performs the waits' effects, outside the lock; `asked`: the requests they name, by waiter.
    private func perform(_ effects: [ListingWaiters.Effect], asked: [Int: ParkedChanges]) {
        for effect in effects {
            switch effect {
            case .answer(let waiters):
                for waiter in waiters { if let asked = asked[waiter] { asked.completion(changesResponse(asked)) } }
            case .refuse(let waiter):
                asked[waiter]?.completion(APIError(status: 503, code: "too_many_waiters",
                                                   message: "too many requests are waiting for changes; retry shortly",
                                                   headers: ["Retry-After": "5"]).response)
            case .armTimer(let waiter, let at):
                let delay = at &- min(at, clock.now())
                listingWaitersQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(min(delay, UInt64(Int.max))))) { [weak self] in
                    self?.handleListingWaiters(.timerFired(waiter: waiter))
                }
            }
        }
    }

    /// The answer to `asked` now: its changes (`LibraryIndex.changes`), or 410
    /// `generation_too_old` when they are not known.
    func changesResponse(_ asked: ParkedChanges) -> HTTPResponse {
        guard let changes = index.changes(since: asked.since, order: asked.order, in: asked.scope) else {
            return APIError(status: 410, code: "generation_too_old",
                            message: "the changes since generation \(asked.since) are not known (too old, or not this server's); list again").response
        }
        let writer = ListingItemWriter(asked.configuration, now: Self.unixTime())
        var body = "{\"since\":\(changes.since),\"generation\":\(changes.generation),\"total\":\(changes.total),\"removed\":["
        for (i, removed) in changes.removed.enumerated() {
            if i > 0 { body += "," }
            body += "{\"index\":\(removed.index),\"path\":\(JSON.quote(removed.record.path.description)),"
                + "\"url\":\"\(PathEncoding.percentEncoded(removed.record.path.bytes))\"}"
        }
        for (name, listed) in [("inserted", changes.inserted), ("changed", changes.changed)] {
            body += "],\"\(name)\":["
            for (i, item) in listed.enumerated() {
                if i > 0 { body += "," }
                body += "{\"index\":\(item.index),\"item\":"
                writer.write(item.record, thumbhash: item.thumbhash, into: &body)
                body += "}"
            }
        }
        body += "]}\n"
        return Self.json(status: 200, body)
    }
}
