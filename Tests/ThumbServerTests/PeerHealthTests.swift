import Cluster
import Dispatch
import Testing

/// `PeerHealth` as nginx's `max_fails=1 fail_timeout=T`: a peer marked down at t is passed over
/// through t + T (nginx's `now - checked <= fail_timeout`) and not after; peers are independent;
/// its closure moves only the down peer's keys on the ring.
@Suite struct PeerHealthTests {
    static let second: UInt64 = 1_000_000_000
    static let t: UInt64 = 5_000 * second   // an uptime of 5,000 s

    @Test func downForDownSecondsFromTheFailureAndUpAfter() {
        let health = PeerHealth(downSeconds: 10)
        #expect(health.downNanoseconds == 10 * Self.second)
        #expect(!health.isDown(0, now: Self.t))   // never marked
        health.markDown(0, now: Self.t)
        #expect(health.isDown(0, now: Self.t))
        #expect(health.isDown(0, now: Self.t + 10 * Self.second - 1))
        #expect(health.isDown(0, now: Self.t + 10 * Self.second))   // the edge: nginx's `<=`
        #expect(!health.isDown(0, now: Self.t + 10 * Self.second + 1))
        #expect(!health.isDown(0, now: Self.t + 3_600 * Self.second))
    }

    @Test func theDefaultIsTenSecondsAndFractionsCount() {
        #expect(PeerHealth().downNanoseconds == 10_000_000_000)
        let health = PeerHealth(downSeconds: 0.25)
        #expect(health.downNanoseconds == 250_000_000)
        health.markDown(3, now: Self.t)
        #expect(health.isDown(3, now: Self.t + 250_000_000))
        #expect(!health.isDown(3, now: Self.t + 250_000_001))
    }

    @Test func aFailureWhileDownMarksItAgainAndALateEarlierMarkDoesNotShortenIt() {
        let health = PeerHealth(downSeconds: 10)
        health.markDown(1, now: Self.t)
        health.markDown(1, now: Self.t + 4 * Self.second)
        #expect(health.isDown(1, now: Self.t + 14 * Self.second))
        #expect(!health.isDown(1, now: Self.t + 14 * Self.second + 1))
        health.markDown(1, now: Self.t)   // another thread's older clock reading, recorded late
        #expect(health.isDown(1, now: Self.t + 14 * Self.second))
    }

    @Test func peersAreIndependent() {
        let health = PeerHealth(downSeconds: 10)
        health.markDown(0, now: Self.t)
        health.markDown(2, now: Self.t + 5 * Self.second)
        let at12 = Self.t + 12 * Self.second
        #expect(!health.isDown(0, now: at12) && !health.isDown(1, now: at12) && health.isDown(2, now: at12))
        let at8 = Self.t + 8 * Self.second
        #expect(health.isDown(0, now: at8) && !health.isDown(1, now: at8) && health.isDown(2, now: at8))
        let down = health.isDown(now: at8)
        #expect([0, 1, 2, 3].map(down) == [true, false, true, false])
    }

    @Test func marksFromManyThreadsAreAllKept() {
        let health = PeerHealth(downSeconds: 10)
        DispatchQueue.concurrentPerform(iterations: 64) { peer in
            for step in 0..<100 { health.markDown(peer, now: Self.t + UInt64(step)) }
        }
        let down = health.isDown(now: Self.t + 99 + 10 * Self.second)
        #expect((0..<64).allSatisfy(down) && !down(64))
        #expect(!(0..<64).contains { health.isDown($0, now: Self.t + 100 + 10 * Self.second) })
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

        let after = keys.map { ring.owner(of: $0, isDown: health.isDown(now: Self.t + 10 * Self.second + 1))! }
        #expect(after == owners)
    }
}
