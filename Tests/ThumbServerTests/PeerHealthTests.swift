import Cluster
import Dispatch
import Synchronization
import Testing

/// `PeerHealth`'s rules (its doc, 1-4): a failed call marks a peer down; while it is down it is
/// probed at most once a second; it is up again as soon as a probe finds that a thumbnail request
/// (nginx's) reached it after the mark, or once it has answered every probe for fail_timeout + 1 s
/// (nginx's window, which began before it answered, is over by then). Tables: events at times in,
/// down or not out.
@Suite struct PeerHealthTests {
    static let second: UInt64 = 1_000_000_000
    static let t: UInt64 = 5_000 * second   // an uptime of 5,000 s

    /// One step of a table: at `at` seconds after `t`, an event, then whether peer 0 is down.
    enum Event {
        case fail
        case probe(PeerHealth.Probe)
        case nothing
    }

    /// Runs `steps` (seconds after `t`, event, expected `isDown` just after it) on a fresh
    /// health with fail_timeout 10 s.
    static func run(_ steps: [(at: Double, event: Event, down: Bool)], sourceLocation: SourceLocation = #_sourceLocation) {
        let health = PeerHealth(downSeconds: 10)
        for (i, step) in steps.enumerated() {
            let now = t + UInt64((step.at * 1e9).rounded())
            switch step.event {
            case .fail: health.markDown(0, now: now)
            case .probe(let probe): health.probed(0, probe, now: now)
            case .nothing: break
            }
            #expect(health.isDown(0, now: now) == step.down, "step \(i) at +\(step.at) s", sourceLocation: sourceLocation)
        }
    }

    static func routed(secondsAgo: Double?) -> PeerHealth.Probe {
        .answered(routedAgo: secondsAgo.map { UInt64(($0 * 1e9).rounded()) })
    }

    @Test func downFromAFailureUntilAProbeSaysNginxRoutesToItAgain() {
        Self.run([
            (0, .nothing, false),                                  // never marked
            (0, .fail, true),
            (30, .nothing, true),                                   // no timer of its own: probes decide
            (31, .probe(.failed), true),                            // still dead
            (32, .probe(Self.routed(secondsAgo: nil)), true),       // back, nothing routed to it yet
            (33, .probe(Self.routed(secondsAgo: 0.5)), false),      // nginx sent it a request at +32.5: up
            (33.5, .nothing, false),
        ])
    }

    @Test func aRequestFromBeforeTheMarkDoesNotCount() {
        Self.run([
            (0, .fail, true),
            (1, .probe(Self.routed(secondsAgo: 1.5)), true),         // a request at -0.5 s: before the failure
            (2, .probe(Self.routed(secondsAgo: 2.0)), true),         // exactly at the failure: not after it
            (3, .probe(Self.routed(secondsAgo: 2.9)), false),        // at +0.1 s: after it
        ])
    }

    @Test func answeringWithoutTrafficIsUpAfterFailTimeoutAndOneSecond() {
        // nginx failed it before +4 (it answered from +4 on): its window ends by +4 + 10 + 1.
        Self.run([
            (0, .fail, true),
            (4, .probe(Self.routed(secondsAgo: nil)), true),
            (5, .probe(Self.routed(secondsAgo: nil)), true),         // the first answer counts, not the latest
            (15, .nothing, true),
            (15, .probe(Self.routed(secondsAgo: nil)), true),
            (4 + 11, .nothing, true),                                // the edge: still down
            (15.000000001, .nothing, false),
        ])
    }

    @Test func aFailedProbeOrCallStartsTheAnsweringOver() {
        Self.run([
            (0, .fail, true),
            (4, .probe(Self.routed(secondsAgo: nil)), true),
            (8, .probe(.failed), true),                              // gone again
            (9, .probe(Self.routed(secondsAgo: nil)), true),
            (16, .nothing, true),                                    // +4 + 11 passed, but it answers since +9
            (20.5, .nothing, false),                                 // +9 + 11
            (21, .fail, true),                                       // a failed call after it was up
            (22, .probe(Self.routed(secondsAgo: nil)), true),
            (23, .probe(Self.routed(secondsAgo: 1.5)), false),       // a request at +21.5, after the failure: up
        ])
    }

    @Test func probesAreDueOnceASecondWhileDownAndClaimedByOneCaller() {
        let health = PeerHealth(downSeconds: 10)
        let s = Self.second
        #expect(!health.probeDue(0, now: Self.t))                    // up: never probed
        health.markDown(0, now: Self.t)
        #expect(!health.probeDue(0, now: Self.t + s - 1))            // the failure counts as a probe
        #expect(health.probeDue(0, now: Self.t + s))
        #expect(!health.probeDue(0, now: Self.t + s))                // claimed: one prober
        #expect(!health.probeDue(0, now: Self.t + 2 * s - 1))
        #expect(health.probeDue(0, now: Self.t + 2 * s))
        #expect(!health.probeDue(0, now: Self.t))                    // a clock read earlier, elsewhere
        health.probed(0, .answered(routedAgo: s / 2), now: Self.t + 2 * s)
        #expect(!health.isDown(0, now: Self.t + 2 * s) && !health.probeDue(0, now: Self.t + 5 * s))   // up: no more probes
        // Claimed from many threads at once: one wins each second.
        health.markDown(1, now: Self.t)
        let wins = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            if health.probeDue(1, now: Self.t + s) { wins.withLock { $0 += 1 } }
        }
        #expect(wins.withLock { $0 } == 1)
    }

    @Test func theDefaultIsTenSecondsAndFractionsCount() {
        #expect(PeerHealth().downNanoseconds == 10_000_000_000)
        let health = PeerHealth(downSeconds: 0.25)
        #expect(health.downNanoseconds == 250_000_000)
        health.markDown(3, now: Self.t)
        health.probed(3, .answered(routedAgo: nil), now: Self.t + Self.second)
        #expect(health.isDown(3, now: Self.t + Self.second + 1_250_000_000))
        #expect(!health.isDown(3, now: Self.t + Self.second + 1_250_000_001))
    }

    @Test func aLaterFailureMovesTheMarkAndALateEarlierOneDoesNot() {
        let health = PeerHealth(downSeconds: 10)
        health.markDown(1, now: Self.t + 4 * Self.second)
        health.markDown(1, now: Self.t)   // another thread's older clock reading, recorded late
        health.probed(1, .answered(routedAgo: 3 * Self.second), now: Self.t + 6 * Self.second)   // a request at +3: before +4
        #expect(health.isDown(1, now: Self.t + 6 * Self.second))
        health.probed(1, .answered(routedAgo: Self.second), now: Self.t + 6 * Self.second)   // at +5
        #expect(!health.isDown(1, now: Self.t + 6 * Self.second))
    }

    @Test func peersAreIndependent() {
        let health = PeerHealth(downSeconds: 10)
        let s = Self.second
        health.markDown(0, now: Self.t)
        health.markDown(2, now: Self.t + 5 * s)
        health.probed(0, .answered(routedAgo: s), now: Self.t + 8 * s)   // routed at +7: up
        health.probed(2, .answered(routedAgo: s), now: Self.t + 8 * s)   // routed at +7, after its mark at +5: up
        health.probed(1, .answered(routedAgo: nil), now: Self.t + 8 * s) // never marked: nothing to do
        #expect(!health.isDown(0, now: Self.t + 8 * s) && !health.isDown(1, now: Self.t + 8 * s) && !health.isDown(2, now: Self.t + 8 * s))
        health.markDown(0, now: Self.t + 9 * s)
        health.markDown(2, now: Self.t + 9 * s)
        health.probed(2, .answered(routedAgo: s), now: Self.t + 11 * s)  // routed at +10: up; 0 not probed
        let down = health.isDown(now: Self.t + 11 * s)
        #expect([0, 1, 2, 3].map(down) == [true, false, false, false])
    }

    @Test func marksFromManyThreadsAreAllKept() {
        let health = PeerHealth(downSeconds: 10)
        DispatchQueue.concurrentPerform(iterations: 64) { peer in
            for step in 0..<100 { health.markDown(peer, now: Self.t + UInt64(step)) }
        }
        let down = health.isDown(now: Self.t + 3_600 * Self.second)
        #expect((0..<64).allSatisfy(down) && !down(64))
        // The latest mark of each is kept: a request at +99 ns is not after it, one at +100 ns is.
        for peer in 0..<64 { health.probed(peer, .answered(routedAgo: Self.second - 99), now: Self.t + Self.second) }
        #expect((0..<64).allSatisfy { health.isDown($0, now: Self.t + Self.second) })
        for peer in 0..<64 { health.probed(peer, .answered(routedAgo: Self.second - 100), now: Self.t + Self.second) }
        #expect(!(0..<64).contains { health.isDown($0, now: Self.t + Self.second) })
    }

    @Test func onTheRingOnlyTheDownPeersKeysMoveAndComeBack() {
        let ring = PeerRing(peers: [.init(server: "127.0.0.1:9001"), .init(server: "127.0.0.1:9002"), .init(server: "127.0.0.1:9003")])
        let keys = NginxRingTests.paths.map { Array($0.utf8) }
        let owners = keys.map { ring.owner(of: $0)! }
        let health = PeerHealth(downSeconds: 10)
        health.markDown(1, now: Self.t)

        let whileDown = keys.map { ring.owner(of: $0, isDown: health.isDown(now: Self.t + 10 * Self.second))! }
        var moved = 0
        for (before, during) in zip(owners, whileDown) {
            if before == 1 { moved += 1; #expect(during != 1) } else { #expect(during == before) }
        }
        #expect(moved > 200 && moved < 450, "peer 1 owned \(moved) of 1,000")   // about a third

        health.probed(1, .answered(routedAgo: Self.second), now: Self.t + 12 * Self.second)
        let after = keys.map { ring.owner(of: $0, isDown: health.isDown(now: Self.t + 12 * Self.second))! }
        #expect(zip(after, owners).allSatisfy { $0 == $1 }, "keys not back on their owner once it is up")
    }
}
