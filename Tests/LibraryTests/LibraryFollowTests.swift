import Foundation
@testable import Library
import Rendering
import Synchronization
import Testing
import TestSupport

/// `LibraryIndex.follow`: the listing hears of changes from a feed and reads only what it names;
/// it scans the whole tree only when the feed lost track, while the feed is blind, and at the
/// safety sweep.
@Suite struct LibraryFollowTests {
    /// A feed the test drives: it reports what it is told to.
    final class Feed: LibraryChangeFeed, @unchecked Sendable {
        private let state = Mutex<(paths: [DiskPath], lost: Bool, sees: Bool, handler: (@Sendable () -> Void)?)>(([], false, true, nil))
        func onChanges(_ handler: @escaping @Sendable () -> Void) { state.withLock { $0.handler = handler } }
        func takeChanges() -> [DiskPath]? {
            state.withLock { s in
                defer { s.paths = []; s.lost = false }
                return s.lost ? nil : s.paths
            }
        }
        var seesEverything: Bool { state.withLock { $0.sees } }
        func report(_ paths: [DiskPath], lost: Bool = false) {
            let handler = state.withLock { s in
                s.paths += paths
                s.lost = s.lost || lost
                return s.handler
            }
            handler?()
        }
        func blind(_ blind: Bool) { state.withLock { $0.sees = !blind } }
    }

    func index(_ files: [String]) throws -> (TemporaryDirectory, LibraryIndex) {
        let dir = TemporaryDirectory()
        for file in files { dir.write(file, [UInt8](Fixtures.photo("Landscape_1.jpg"))) }
        let index = try LibraryIndex(library: try Library(root: dir.path), databasePath: ":memory:")
        return (dir, index)
    }

    func listed(_ index: LibraryIndex) -> [String] {
        index.listing(order: .oldest, offset: 0, limit: 100).items.map(\.path.description).sorted()
    }


    @Test func reportedChangesAreReadAndNothingElseIsScanned() throws {
        let (dir, index) = try index(["a.jpg", "2024/b.jpg"])
        let feed = Feed()
        index.follow(feed, pollSeconds: 3600, sweepSeconds: 0)
        #expect(eventually { index.completedScans == 1 })
        #expect(listed(index) == ["2024/b.jpg", "a.jpg"])
        let reads = index.headerReads
        dir.write("2024/new.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        dir.write("unreported.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        feed.report(["2024/new.jpg"])
        #expect(eventually { listed(index).contains("2024/new.jpg") })
        #expect(index.headerReads - reads == 1)
        #expect(unlink(dir.path + "/a.jpg") == 0)
        feed.report(["a.jpg"])
        #expect(eventually { !listed(index).contains("a.jpg") })
        usleep(200_000)
        #expect(!listed(index).contains("unreported.jpg"))   // no scan of the whole tree meanwhile
        #expect(index.completedScans == 1)
        feed.report([], lost: true)   // the feed lost track: the whole tree
        #expect(eventually { listed(index).contains("unreported.jpg") })
        // the scan's rows are listed before its count goes up (rescan counts a scan once it
        // has returned): wait for the count, and then it must be exactly one more
        #expect(eventually { index.completedScans >= 2 })
        #expect(index.completedScans == 2)
    }

    @Test func whileTheFeedIsBlindTheTreeIsPolled() throws {
        let (dir, index) = try index(["a.jpg"])
        let feed = Feed()
        feed.blind(true)
        index.follow(feed, pollSeconds: 0.1, sweepSeconds: 0)
        #expect(eventually { index.completedScans >= 1 })
        dir.write("b.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        #expect(eventually { listed(index) == ["a.jpg", "b.jpg"] })
        feed.blind(false)
        usleep(150_000)
        let scans = index.completedScans
        dir.write("c.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        usleep(400_000)
        #expect(index.completedScans == scans)   // sighted again: no more polling
        #expect(!listed(index).contains("c.jpg"))
    }

    @Test func theSafetySweepScansTheWholeTree() throws {
        let (dir, index) = try index(["a.jpg"])
        let feed = Feed()
        index.follow(feed, pollSeconds: 0.05, sweepSeconds: 0.3)
        #expect(eventually { index.completedScans >= 1 })
        dir.write("b.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))   // never reported
        #expect(eventually { listed(index) == ["a.jpg", "b.jpg"] })
    }
}
