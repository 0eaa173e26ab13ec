import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import ThumbdClient

/// A change feed's answer applied to the result the app shows (`ThumbdChangeDetails(applying:to:)`,
/// docs/API.md, "Change feed"): removed at their indexes before, inserted and changed at theirs
/// after; an answer that does not fit is refused (the stream then lists again).
@Suite struct ThumbdChangeDetailsTests {
    static let connection = ThumbdConnection(baseURL: URL(string: "http://127.0.0.1:1/")!, clientKey: nil, clientID: "test",
                                             apiSession: URLSession.shared, imageSession: URLSession.shared)

    static func item(_ name: String, bytes: Int = 1) -> ListingWire.Item {
        ListingWire.Item(path: name, url: name, bytes: bytes, type: .photo, duration_ms: nil, width: 1, height: 1,
                         taken: "2024-01-01T00:00:00Z", modified: "2024-01-01T00:00:00Z", thumbhash: nil,
                         thumbnails: ["3": "/thumbnails/3/\(name)?v=\(bytes)"])
    }

    static func result(_ names: [String], generation: Int) throws -> ThumbdFetchResult {
        ThumbdFetchResult(assets: try names.map { try item($0).asset(connection) }, sort: .newest, generation: generation)
    }

    @Test func anAnswerAppliesAtItsIndexes() throws {
        let before = try Self.result(["a", "b", "c", "d"], generation: 7)
        let answer = ChangesWire(since: 7, generation: 9, total: 4,
                                 removed: [.init(index: 1, url: "b")],
                                 inserted: [.init(index: 0, item: Self.item("e"))],
                                 changed: [.init(index: 3, item: Self.item("d", bytes: 2))])
        let details = try ThumbdChangeDetails(applying: answer, to: before, Self.connection)
        #expect(details.fetchResultAfterChanges.map(\.id) == ["e", "a", "c", "d"])
        #expect(details.fetchResultAfterChanges[3].bytes == 2)
        #expect(details.fetchResultAfterChanges.generation == 9)
        #expect(details.removedIndexes == IndexSet([1]) && details.insertedIndexes == IndexSet([0]))
        #expect(details.changedIndexes == IndexSet([3]) && !details.hasMoves)
    }

    @Test func anAnswerThatDoesNotFitIsRefused() throws {
        let before = try Self.result(["a", "b"], generation: 7)
        for answer in [ChangesWire(since: 7, generation: 8, total: 1, removed: [.init(index: 0, url: "b")], inserted: [], changed: []),
                       ChangesWire(since: 7, generation: 8, total: 3, removed: [], inserted: [.init(index: 3, item: Self.item("c"))], changed: []),
                       ChangesWire(since: 7, generation: 8, total: 2, removed: [], inserted: [], changed: [.init(index: 0, item: Self.item("b"))]),
                       ChangesWire(since: 7, generation: 8, total: 5, removed: [], inserted: [], changed: [])] {
            #expect(throws: ThumbdError.self) { try ThumbdChangeDetails(applying: answer, to: before, Self.connection) }
        }
    }
}
