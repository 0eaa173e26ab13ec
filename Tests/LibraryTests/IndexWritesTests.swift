import Testing
@testable import Library

/// Whether `index.sqlite` takes the index's writes (`IndexWrites`) as a table: outcomes and the
/// time in, lines and the fault out; said once each way, never per write.
@Suite struct IndexWritesTests {
    struct Step {
        let event: IndexWrites.Event
        /// Seconds.
        let at: UInt64
        let effects: [IndexWrites.Effect]
        let fault: String?
    }

    static let full = "the library index /c/index.sqlite cannot be written (database or disk is full): "
        + "the listing is kept in memory, and a restart reads again what was not written"

    static let steps: [Step] = [
        Step(event: .written, at: 1, effects: [], fault: nil),
        Step(event: .failed(why: "database or disk is full"), at: 10,
             effects: [.say("library: the index /c/index.sqlite cannot be written (database or disk is full); "
                            + "the listing is kept in memory until it can be written again")],
             fault: full),
        // More failures, another reason among them: no line; the fault keeps the first reason.
        Step(event: .failed(why: "database or disk is full"), at: 11, effects: [], fault: full),
        Step(event: .failed(why: "disk I/O error"), at: 12, effects: [], fault: full),
        Step(event: .written, at: 55,
             effects: [.say("library: the index /c/index.sqlite is written again, after 45 s")], fault: nil),
        Step(event: .written, at: 56, effects: [], fault: nil),
        // A second fault is said again.
        Step(event: .failed(why: "disk I/O error"), at: 60,
             effects: [.say("library: the index /c/index.sqlite cannot be written (disk I/O error); "
                            + "the listing is kept in memory until it can be written again")],
             fault: "the library index /c/index.sqlite cannot be written (disk I/O error): "
                + "the listing is kept in memory, and a restart reads again what was not written"),
    ]

    @Test func aFailedWriteIsAFaultSaidOnceEachWay() {
        var writes = IndexWrites(path: "/c/index.sqlite")
        for (n, step) in Self.steps.enumerated() {
            #expect(writes.handle(step.event, at: step.at * 1_000_000_000) == step.effects, "step \(n)")
            #expect(writes.fault == step.fault, "step \(n)")
        }
    }
}
