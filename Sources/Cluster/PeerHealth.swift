import Synchronization

/// Which peers are down, judged so as to agree with nginx's `server … max_fails=1
/// fail_timeout=T` (ngx_http_upstream_module): one failed attempt makes a server unavailable for
/// `fail_timeout`, its keys going to the next point of the ring meanwhile
/// (`PeerRing.owner(of:isDown:)`); after it, the next live request tries it again, and it is up
/// again as soon as one succeeds.
///
/// thumbd cannot read nginx's timer: nginx's failure came from its own request, at another time
/// than this node's failed call. So instead of a timer of its own, a peer marked down is probed
/// (`probeDue`, then `probed`: a cheap `GET /healthz` at most once per `probeIntervalNanoseconds`)
/// and it is up again when a probe shows nginx routing to it:
///
/// 1. a failed call at t marks the peer down (a later failure moves the mark to it);
/// 2. a probe that gets no answer changes nothing but forgets that the peer answered before;
/// 3. a probe answered by a peer that received a thumbnail request after the mark (nginx sent it
///    one: only nginx's `thumbd_by_asset` sends thumbnail requests) makes it up at once: nginx is
///    routing to it again;
/// 4. a peer that has answered every probe since the first one that reached it, at a, without any
///    thumbnail request reaching it, is up after a + `downNanoseconds` + 1 s: nginx's failure came
///    before it answered (a dead or hung peer fails nginx's request), so nginx's window, counted
///    in whole seconds (`now - checked <= fail_timeout`, `ngx_time()`), is over by then, and
///    nginx tries it with its next request.
///
/// So a peer nginx routes to is down here at most one probe interval after nginx sent it a
/// request (1 s), and a peer marked down here that nginx still passes over is not called (only a
/// thumbnail request nginx sent it makes it up before rule 4's bound). A peer nginx failed but
/// this node never called is not marked here at all: its failures are the only ones it sees.
///
/// Times are uptime nanoseconds passed in by the caller (`DispatchTime.now().uptimeNanoseconds`
/// in the server; any value in tests), so that the rules are tested without sleeping.
/// Peers are indices into `PeerRing.peers`.
/// Locking: one `Mutex` guards the table of marks; every method takes it once.
public final class PeerHealth: Sendable {
    /// nginx's `fail_timeout`, in nanoseconds: thumbd's `peer_down_seconds` (10 s by default)
    /// × 10⁹. How long after a peer answers again it may stay down with no sign of nginx routing
    /// to it (rule 4, plus 1 s for nginx's whole seconds).
    public let downNanoseconds: UInt64
    /// The shortest time between two probes of one peer, in nanoseconds: 1 s.
    public static let probeIntervalNanoseconds: UInt64 = 1_000_000_000

    /// What a probe of a peer found.
    public enum Probe: Sendable, Equatable {
        /// No answer in time (refused, unreachable, timed out, not HTTP).
        case failed
        /// An answer; `routedAgo`: nanoseconds since the peer last received a thumbnail request
        /// (one nginx sent), as the peer counts them; nil when none since it started.
        case answered(routedAgo: UInt64?)
    }

    /// One peer marked down.
    struct Mark: Sendable, Equatable {
        /// Uptime ns of its latest failed call.
        var failedAt: UInt64
        /// Uptime ns of its latest probe (or failed call: it counts as one).
        var probedAt: UInt64
        /// Uptime ns of the first probe it has answered since it last did not; nil while none.
        var answeringSince: UInt64?
    }

    /// Peer index → its mark; a peer not here is up.
    private let marks = Mutex<[Int: Mark]>([:])

    /// Health with nginx's `fail_timeout` of `downSeconds` (`peer_down_seconds`; `10` by default;
    /// negative counts as 0).
    public init(downSeconds: Double = 10) {
        downNanoseconds = UInt64((max(0, downSeconds) * 1e9).rounded())
    }

    /// Rule 1: a call to `peer` failed at `now` (uptime ns). An earlier time than its latest
    /// mark (another thread's clock reading, recorded late) leaves the later mark.
    public func markDown(_ peer: Int, now: UInt64) {
        marks.withLock { marks in
            let failedAt = max(marks[peer]?.failedAt ?? 0, now)
            marks[peer] = Mark(failedAt: failedAt, probedAt: max(marks[peer]?.probedAt ?? 0, now), answeringSince: nil)
        }
    }

    /// Whether `peer` is to be probed at `now`: it is down and its latest probe (or failure) is
    /// `probeIntervalNanoseconds` old or more. True claims the probe (it counts as made at
    /// `now`), so that of several threads asking at once one probes.
    public func probeDue(_ peer: Int, now: UInt64) -> Bool {
        marks.withLock { marks in
            guard let mark = marks[peer], Self.isDown(mark, now: now, downNanoseconds: downNanoseconds),
                  now >= mark.probedAt, now - mark.probedAt >= Self.probeIntervalNanoseconds else { return false }
            marks[peer]!.probedAt = now
            return true
        }
    }

    /// Rules 2 and 3: a probe of `peer` answered at `now` (uptime ns) with `probe`.
    public func probed(_ peer: Int, _ probe: Probe, now: UInt64) {
        marks.withLock { marks in
            guard let mark = marks[peer] else { return }
            switch probe {
            case .failed:
                marks[peer]!.answeringSince = nil
            case .answered(let routedAgo):
                if let routedAgo, now >= routedAgo, now - routedAgo > mark.failedAt {
                    marks[peer] = nil
                } else if mark.answeringSince == nil {
                    marks[peer]!.answeringSince = now
                }
            }
        }
    }

    /// Whether `peer` is down at `now` (uptime ns).
    public func isDown(_ peer: Int, now: UInt64) -> Bool {
        marks.withLock { marks in marks[peer].map { Self.isDown($0, now: now, downNanoseconds: downNanoseconds) } ?? false }
    }

    /// The peers down at `now`, taken once, as the closure `PeerRing.owner(of:isDown:)` takes:
    /// `ring.owner(of: key, isDown: health.isDown(now: now))`. One lock for the whole lookup,
    /// and one consistent view of it; later marks are not seen by the closure.
    public func isDown(now: UInt64) -> @Sendable (Int) -> Bool {
        let down: Set<Int> = marks.withLock { marks in
            Set(marks.compactMap { peer, mark in Self.isDown(mark, now: now, downNanoseconds: downNanoseconds) ? peer : nil })
        }
        return { down.contains($0) }
    }

    /// Rule 4: marked, unless it has answered since a with `now` past a + `downNanoseconds` + 1 s.
    static func isDown(_ mark: Mark, now: UInt64, downNanoseconds: UInt64) -> Bool {
        guard let since = mark.answeringSince else { return true }
        return now < since || now - since <= downNanoseconds + 1_000_000_000
    }
}
