import Testing
@testable import ThumbServer

/// `PlaceholderPull`'s rules, as tables of events and the calls they lead to (no sleeps, no
/// sockets): every peer asked from the start, one call per peer at a time, the cursor moved by
/// answers only, more asked at once, failures backing off.
@Suite struct PlaceholderPullTests {
    typealias Cursor = PlaceholderPull.Cursor
    static let second: UInt64 = 1_000_000_000

    /// Feeds `steps` in order to a pull from peers 0 and 2 (this node is 1), asked again 2 s after
    /// an answer with nothing more, and checks each step's effects.
    func run(_ steps: [(PlaceholderPull.Event, [PlaceholderPull.Effect])]) -> PlaceholderPull {
        var pull = PlaceholderPull(peers: [0, 2], intervalNanoseconds: 2 * Self.second)
        for (i, (event, expected)) in steps.enumerated() {
            let effects = pull.handle(event)
            #expect(effects == expected, "step \(i): \(event)")
        }
        return pull
    }

    @Test func aStartAsksEveryPeerFromTheBeginningAndAnswersMoveTheCursor() {
        let s = Self.second
        let pull = run([
            (.tick(now: 10 * s), [.fetch(peer: 0, cursor: Cursor(epoch: nil, after: 0)), .fetch(peer: 2, cursor: Cursor(epoch: nil, after: 0))]),
            // One call per peer at a time: a tick while both are asked asks nobody.
            (.tick(now: 10 * s + 1), []),
            // More follow: the next batch at once, from the answer's next, under its epoch.
            (.answered(peer: 0, epoch: "e1", next: 1000, more: true, now: 11 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 1000))]),
            (.answered(peer: 0, epoch: "e1", next: 1500, more: false, now: 11 * s), []),
            (.answered(peer: 2, epoch: "f1", next: 40, more: false, now: 11 * s), []),
            // Asked again 2 s after the answer, from where they got to.
            (.tick(now: 13 * s - 1), []),
            (.tick(now: 13 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 1500)), .fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 40))]),
            // Peer 2 restarted: it answers from its new feed's start, and the cursor follows it.
            (.answered(peer: 2, epoch: "f2", next: 7, more: false, now: 13 * s), []),
            (.answered(peer: 0, epoch: "e1", next: 1500, more: false, now: 13 * s), []),
            (.tick(now: 15 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 1500)), .fetch(peer: 2, cursor: Cursor(epoch: "f2", after: 7))]),
            // An answer nobody asked for (a stale one) changes nothing.
            (.answered(peer: 0, epoch: "e1", next: 1500, more: false, now: 15 * s), []),
            (.answered(peer: 0, epoch: "zz", next: 99, more: true, now: 15 * s), []),
        ])
        #expect(pull.cursors == [0: Cursor(epoch: "e1", after: 1500), 2: Cursor(epoch: nil, after: 0)].merging([2: Cursor(epoch: "f2", after: 7)]) { $1 })
    }

    @Test func aPeerDownKeepsItsCursorAndIsAskedLessOften() {
        let s = Self.second
        let pull = run([
            (.tick(now: 0), [.fetch(peer: 0, cursor: Cursor()), .fetch(peer: 2, cursor: Cursor())]),
            (.answered(peer: 0, epoch: "e1", next: 30, more: false, now: 0), []),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 0), []),
            (.tick(now: 2 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 30)), .fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 2 * s), []),
            // Peer 0 fails: asked again after 2 s, then 4 s, then 8 s...
            (.failed(peer: 0, now: 2 * s), []),
            (.tick(now: 4 * s - 1), []),
            (.tick(now: 4 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 30)), .fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 4 * s), []),
            (.failed(peer: 0, now: 4 * s), []),
            (.tick(now: 6 * s), [.fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 6 * s), []),
            (.tick(now: 8 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 30)), .fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 8 * s), []),
            (.failed(peer: 0, now: 8 * s), []),
            (.tick(now: 16 * s - 1), [.fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
            (.answered(peer: 2, epoch: "f1", next: 5, more: false, now: 16 * s - 1), []),
            // Back: the cursor it had, and the interval again after an answer.
            (.tick(now: 16 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 30))]),
            (.answered(peer: 0, epoch: "e1", next: 31, more: false, now: 16 * s), []),
            (.tick(now: 18 * s), [.fetch(peer: 0, cursor: Cursor(epoch: "e1", after: 31)), .fetch(peer: 2, cursor: Cursor(epoch: "f1", after: 5))]),
        ])
        #expect(pull.failures[0] == 0)
    }

    @Test func theBackoffStopsGrowingAtAMinute() {
        var pull = PlaceholderPull(peers: [1], intervalNanoseconds: 2 * Self.second)
        var now: UInt64 = 0
        for _ in 0..<40 {
            _ = pull.handle(.tick(now: now))
            _ = pull.handle(.failed(peer: 1, now: now))
            now = pull.nextAt[1]!
        }
        let before = now
        _ = pull.handle(.tick(now: now))
        _ = pull.handle(.failed(peer: 1, now: now))
        #expect(pull.nextAt[1]! - before == PlaceholderPull.maximumBackoffNanoseconds)
    }
}
