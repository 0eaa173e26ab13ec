import Testing
@testable import ThumbdClient

/// The download queue by table: events in, effects out, step by step. Downloads are numbered in
/// the order their cells became visible.
@Suite struct ThumbdDownloadQueueTests {
    typealias Event = ThumbdDownloadQueue.Event
    typealias Effect = ThumbdDownloadQueue.Effect

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var limit: Int
        var opening: ThumbdDownloadQueue.Opening
        var steps: [(Event, [Effect])]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "at most the limit at once, the rest in the order asked", limit: 2, opening: .never, steps: [
            (.asked(1), [.send(1)]),
            (.asked(2), [.send(2)]),
            (.asked(3), []),
            (.asked(4), []),
            (.finished(2, keptConnection: true), [.send(3)]),
            (.finished(1, keptConnection: true), [.send(4)]),
        ]),
        Case(name: "a waiting download that is left is never sent", limit: 1, opening: .never, steps: [
            (.asked(1), [.send(1)]),
            (.asked(2), []),
            (.asked(3), []),
            (.left(2), []),
            (.finished(1, keptConnection: true), [.send(3)]),
            (.finished(3, keptConnection: true), []),
        ]),
        Case(name: "a sent download that is left is cancelled, and its place goes to the next", limit: 1, opening: .never, steps: [
            (.asked(1), [.send(1)]),
            (.asked(2), []),
            (.left(1), [.cancel(1), .send(2)]),
            // Its URLSessionTask ends cancelled after: nothing more.
            (.finished(1, keptConnection: false), []),
        ]),
        Case(name: "the first download waits for a no-op to open its connection", limit: 6, opening: .beforeFirstUse, steps: [
            (.asked(1), [.openConnection]),
            (.asked(2), []),
            (.opened(true), [.send(1), .openConnection]),
            (.opened(true), [.send(2)]),
            // Both connections carry a download: the third waits for a third connection.
            (.asked(3), [.openConnection]),
            (.opened(true), [.send(3)]),
            // The first's connection kept: the fourth goes over it.
            (.finished(1, keptConnection: true), []),
            (.asked(4), [.send(4)]),
        ]),
        Case(name: "a cancel closes its connection: the next download waits for a new one", limit: 2, opening: .beforeFirstUse, steps: [
            (.asked(1), [.openConnection]),
            (.opened(true), [.send(1)]),
            (.asked(2), [.openConnection]),
            (.opened(true), [.send(2)]),
            (.asked(3), []),
            (.left(1), [.cancel(1), .openConnection]),
            (.opened(true), [.send(3)]),
        ]),
        Case(name: "Connection: close or a network error: the next download waits for a new one", limit: 2, opening: .beforeFirstUse, steps: [
            (.asked(1), [.openConnection]),
            (.opened(true), [.send(1)]),
            (.finished(1, keptConnection: false), []),
            (.asked(2), [.openConnection]),
            (.opened(true), [.send(2)]),
            (.finished(2, keptConnection: true), []),
            (.asked(3), [.send(3)]),
        ]),
        Case(name: "a download that ends while the no-op is under way may give it its connection: not counted", limit: 2, opening: .beforeFirstUse, steps: [
            (.asked(1), [.openConnection]),
            (.opened(true), [.send(1)]),
            (.asked(2), [.openConnection]),
            (.finished(1, keptConnection: true), [.send(2)]),
            (.opened(true), []),
            // One connection counted, carrying 2: the next waits for a no-op.
            (.asked(3), [.openConnection]),
        ]),
        Case(name: "a no-op not answered: the download goes as it is, no no-op again for it", limit: 2, opening: .beforeFirstUse, steps: [
            (.asked(1), [.openConnection]),
            (.asked(2), []),
            (.opened(false), [.send(1), .openConnection]),
            (.opened(false), [.send(2)]),
            (.finished(1, keptConnection: false), []),
            (.finished(2, keptConnection: false), []),
        ]),
    ]

    @Test(arguments: cases)
    func eventsInEffectsOut(_ table: Case) {
        var queue = ThumbdDownloadQueue(limit: table.limit, opening: table.opening)
        for (number, (event, effects)) in table.steps.enumerated() {
            #expect(queue.handle(event) == effects, "step \(number + 1): \(event)")
        }
    }
}
