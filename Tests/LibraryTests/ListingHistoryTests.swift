@testable import Library
import Rendering
import Testing

/// The index's history of changes is bounded (`ListingHistory`): by changes kept and by paths
/// kept; past either, the oldest are let go and the changes since a generation before them are
/// not known (nil: the client lists again).
@Suite struct ListingHistoryTests {
    static func change(_ generation: Int, paths: Int = 1) -> ListingChange {
        ListingChange(generation: generation, removed: [],
                      inserted: (0..<paths).map { DiskPath(bytes: Array("p\(generation)-\($0).jpg".utf8)) })
    }

    @Test func theOldestChangesGoPastTheGenerationBound() {
        var history = ListingHistory(base: 100)
        #expect(history.since(100, current: 100)?.count == 0)
        for g in 101...(100 + ListingHistory.maxGenerations) { history.append(Self.change(g)) }
        let current = 100 + ListingHistory.maxGenerations
        #expect(history.since(100, current: current)?.count == ListingHistory.maxGenerations)
        #expect(history.since(current - 2, current: current)?.map(\.generation) == [current - 1, current])
        history.append(Self.change(current + 1))
        #expect(history.since(100, current: current + 1) == nil)
        #expect(history.since(101, current: current + 1)?.count == ListingHistory.maxGenerations)
        #expect(history.since(current + 2, current: current + 1) == nil)   // not given yet
        #expect(history.since(99, current: current + 1) == nil)
    }

    @Test func theOldestChangesGoPastThePathBound() {
        var history = ListingHistory(base: 0)
        history.append(Self.change(1, paths: ListingHistory.maxPaths - 1))
        history.append(Self.change(2, paths: 1))
        #expect(history.since(0, current: 2)?.count == 2)
        history.append(Self.change(3, paths: 1))
        #expect(history.since(0, current: 3) == nil)
        #expect(history.since(1, current: 3)?.map(\.generation) == [2, 3])
        history.append(Self.change(4, paths: ListingHistory.maxPaths + 1))   // too big to keep at all
        #expect(history.since(3, current: 4) == nil)
        #expect(history.since(4, current: 4)?.count == 0)
    }
}
