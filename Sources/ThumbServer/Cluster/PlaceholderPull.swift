/// When this node asks each peer for the placeholders it made, and from where (docs/cluster.md,
/// "Placeholders"): a state machine fed events with the time (uptime ns), returning the calls to
/// make; `ClusterPlaceholders` performs them. Its rules:
///
/// 1. every peer is asked at the first tick, from the start of its feed (a node starting knows
///    no cursor: it pulls everything, and keeps only what it lacks);
/// 2. one call per peer at a time; a tick asks each peer whose next time has come;
/// 3. an answer moves the peer's cursor to its `next` under its `epoch` (a peer that restarted
///    answers from its new feed's start, with a new epoch); with `more`, the next batch is asked
///    at once, else the peer is asked again `intervalNanoseconds` later;
/// 4. a failed call (no answer, an error status, a peer marked down by `PeerHealth`) keeps the
///    cursor and backs off: the peer is asked again after the interval doubled per failure in a
///    row, at most `maximumBackoffNanoseconds`.
struct PlaceholderPull: Sendable, Equatable {
    /// Where this node has got to in one peer's feed.
    struct Cursor: Sendable, Equatable {
        /// The run of the peer's feed the cursor counts in; nil before its first answer.
        var epoch: String?
        /// The sequence number last received (0: none).
        var after = 0
    }

    enum Event: Sendable, Equatable {
        /// The timer fired.
        case tick(now: UInt64)
        /// `peer` answered a call with its feed's `epoch`, the number to ask after next and
        /// whether more entries follow.
        case answered(peer: Int, epoch: String, next: Int, more: Bool, now: UInt64)
        /// A call to `peer` failed.
        case failed(peer: Int, now: UInt64)
    }

    enum Effect: Sendable, Equatable {
        /// Ask `peer` for its feed after `cursor`.
        case fetch(peer: Int, cursor: Cursor)
    }

    /// How long after an answer with nothing more a peer is asked again, ns.
    let intervalNanoseconds: UInt64
    /// The longest wait after failures, ns: 60 s.
    static let maximumBackoffNanoseconds: UInt64 = 60_000_000_000

    private(set) var cursors: [Int: Cursor]
    /// Uptime ns at which each peer is next asked (0: at the next tick).
    private(set) var nextAt: [Int: UInt64]
    /// Failed calls in a row, per peer.
    private(set) var failures: [Int: Int]
    /// The peers a call is under way to.
    private(set) var asking: Set<Int> = []

    /// Pulls from `peers` (indices in `peers`, this node left out), each asked again
    /// `intervalNanoseconds` after an answer with nothing more.
    init(peers: [Int], intervalNanoseconds: UInt64) {
        self.intervalNanoseconds = intervalNanoseconds
        cursors = Dictionary(uniqueKeysWithValues: peers.map { ($0, Cursor()) })
        nextAt = Dictionary(uniqueKeysWithValues: peers.map { ($0, 0) })
        failures = Dictionary(uniqueKeysWithValues: peers.map { ($0, 0) })
    }

    mutating func handle(_ event: Event) -> [Effect] {
        switch event {
        case .tick(let now):
            let due = cursors.keys.sorted().filter { !asking.contains($0) && nextAt[$0]! <= now }
            asking.formUnion(due)
            return due.map { .fetch(peer: $0, cursor: cursors[$0]!) }
        case .answered(let peer, let epoch, let next, let more, let now):
            guard asking.contains(peer) else { return [] }
            cursors[peer] = Cursor(epoch: epoch, after: next)
            failures[peer] = 0
            if more { return [.fetch(peer: peer, cursor: cursors[peer]!)] }
            asking.remove(peer)
            nextAt[peer] = now + intervalNanoseconds
            return []
        case .failed(let peer, let now):
            guard asking.remove(peer) != nil else { return [] }
            failures[peer]! += 1
            let shift = UInt64(min(failures[peer]! - 1, 16))
            nextAt[peer] = now + min(intervalNanoseconds << shift, max(intervalNanoseconds, Self.maximumBackoffNanoseconds))
            return []
        }
    }
}
