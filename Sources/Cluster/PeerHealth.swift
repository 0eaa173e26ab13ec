import Synchronization

/// Which peers are down, as nginx's `server … max_fails=1 fail_timeout=T` keeps them
/// (ngx_http_upstream_module): one failed attempt marks a server unavailable for `fail_timeout`,
/// and while it is, its keys go to the next point of the ring (`PeerRing.owner(of:isDown:)`).
/// nginx passes a server over while `now - checked <= fail_timeout`
/// (`ngx_http_upstream_get_chash_peer`), so a peer marked at t is down from t through t + T
/// inclusive and up after; a failure while down marks it again from then.
///
/// Times are uptime nanoseconds passed in by the caller (`DispatchTime.now().uptimeNanoseconds`
/// in the server; any value in tests), so that the edges are tested without sleeping.
/// Peers are indices into `PeerRing.peers`.
/// Locking: one `Mutex` guards the table of marks; every method takes it once.
public final class PeerHealth: Sendable {
    /// How long a peer stays down after a failure, in nanoseconds: thumbd's `peer_down_seconds`
    /// (10 s by default, nginx's `fail_timeout` default) × 10⁹.
    public let downNanoseconds: UInt64
    /// Peer index → uptime nanoseconds of its latest failure.
    private let markedAt = Mutex<[Int: UInt64]>([:])

    /// Health with peers down for `downSeconds` after each failure (`peer_down_seconds`; `10` by
    /// default; negative counts as 0: down at the instant of the failure only).
    public init(downSeconds: Double = 10) {
        downNanoseconds = UInt64((max(0, downSeconds) * 1e9).rounded())
    }

    /// Records that a call to `peer` failed at `now` (uptime ns): it is down through
    /// `now + downNanoseconds`. An earlier time than the latest mark (another thread's, late)
    /// leaves the later mark.
    public func markDown(_ peer: Int, now: UInt64) {
        markedAt.withLock { marks in marks[peer] = max(marks[peer] ?? 0, now) }
    }

    /// Whether `peer` is down at `now` (uptime ns): marked at m with m ≤ now ≤ m + downNanoseconds,
    /// or marked after `now` (a mark from a clock read later on another thread).
    public func isDown(_ peer: Int, now: UInt64) -> Bool {
        markedAt.withLock { marks in
            guard let mark = marks[peer] else { return false }
            return Self.isDown(markedAt: mark, now: now, downNanoseconds: downNanoseconds)
        }
    }

    /// The peers down at `now`, taken once, as the closure `PeerRing.owner(of:isDown:)` takes:
    /// `ring.owner(of: key, isDown: health.isDown(now: now))`. One lock for the whole lookup,
    /// and one consistent view of it; later marks are not seen by the closure.
    public func isDown(now: UInt64) -> @Sendable (Int) -> Bool {
        let down: Set<Int> = markedAt.withLock { marks in
            Set(marks.compactMap { peer, mark in
                Self.isDown(markedAt: mark, now: now, downNanoseconds: downNanoseconds) ? peer : nil
            })
        }
        return { down.contains($0) }
    }

    private static func isDown(markedAt mark: UInt64, now: UInt64, downNanoseconds: UInt64) -> Bool {
        now < mark || now - mark <= downNanoseconds
    }
}
