import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// `LibraryScope`, a client key's folder: judged on where a path really leads, symlinks
/// followed, by the rule itself and by the listing (`LibraryIndex.page(order:from:limit:in:)`),
/// through scans, updates and a restart.
@Suite struct LibraryScopeTests {
    let alice = LibraryScope(folder: [Array("alice".utf8)])

    @Test func theRuleWantsThePathAndWhereItLeadsUnderTheFolder() {
        let family = LibraryScope(folder: [Array("family".utf8), Array("alice".utf8)])
        for (scope, path, real, expected) in [
            (alice, "alice/a.jpg", "alice/a.jpg", true), (alice, "alice/y.jpg", "alice/a.jpg", true),
            (alice, "alice/x.jpg", "bob/b.jpg", false), (alice, "bob/back.jpg", "alice/a.jpg", false),
            (alice, "alicex/c.jpg", "alicex/c.jpg", false), (alice, "alice", "alice", false),
            (alice, "alice/shared/b.jpg", "bob/b.jpg", false),
            (family, "family/alice/a.jpg", "family/alice/a.jpg", true), (family, "family/a.jpg", "family/a.jpg", false),
            (LibraryScope.whole, "alice/x.jpg", "bob/b.jpg", true),
        ] {
            #expect(scope.contains(path: Array(path.utf8), realPath: Array(real.utf8)) == expected, "\(path) -> \(real)")
        }
        #expect(alice.mayName([Array("alice".utf8), Array("x.jpg".utf8)]))
        #expect(!alice.mayName([Array("alice".utf8)]) && !alice.mayName([Array("alicex".utf8), Array("c.jpg".utf8)]))
        #expect(!alice.mayName([Array("alice/x.jpg".utf8)]))   // a name holding `/` (decoded %2F) is no folder of hers
        #expect(LibraryScope.whole.mayName([Array("bob".utf8), Array("b.jpg".utf8)]))
    }

    func listed(_ index: LibraryIndex, in scope: LibraryScope) -> [String] {
        index.page(order: .oldest, from: .offset(0), limit: 100, in: scope).items.map(\.path.description).sorted()
    }

    @Test func theListingFollowsLinksThroughScansUpdatesAndARestart() throws {
        let dir = TemporaryDirectory("thumbd-scope")
        dir.write("alice/a.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        dir.write("bob/b.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        for (target, link) in [("../bob/b.jpg", "alice/x.jpg"), ("../bob", "alice/shared"), ("a.jpg", "alice/y.jpg"),
                               ("../alice/a.jpg", "bob/back.jpg")] {
            #expect(symlink(target, dir.path + "/" + link) == 0, "\(link)")
        }
        let library = try Library(root: dir.path)
        let database = dir.path + "-index.sqlite"
        defer { unlink(database) }
        let index = try LibraryIndex(library: library, databasePath: database)
        index.rescan()
        // alice/shared/back.jpg leads back into her folder: hers. bob/back.jpg is not under it.
        #expect(listed(index, in: alice) == ["alice/a.jpg", "alice/shared/back.jpg", "alice/y.jpg"])
        #expect(listed(index, in: .whole).count == 7)
        #expect(index.page(order: .newest, from: .offset(0), limit: 1, in: alice).total == 3)

        // A link pointed elsewhere, as the watch reports it.
        unlink(dir.path + "/alice/y.jpg")
        #expect(symlink("../bob/b.jpg", dir.path + "/alice/y.jpg") == 0)
        index.update([DiskPath("alice/y.jpg")])
        #expect(listed(index, in: alice) == ["alice/a.jpg", "alice/shared/back.jpg"])
        // And back.
        unlink(dir.path + "/alice/y.jpg")
        #expect(symlink("a.jpg", dir.path + "/alice/y.jpg") == 0)
        index.update([DiskPath("alice/y.jpg")])
        #expect(listed(index, in: alice) == ["alice/a.jpg", "alice/shared/back.jpg", "alice/y.jpg"])

        // A restart answers from the database before its first scan: the disk is asked meanwhile.
        let reopened = try LibraryIndex(library: library, databasePath: database)
        #expect(reopened.isComplete && reopened.completedScans == 0)
        #expect(listed(reopened, in: alice) == ["alice/a.jpg", "alice/shared/back.jpg", "alice/y.jpg"])
        #expect(listed(reopened, in: .whole).count == 7)
        reopened.rescan()
        #expect(listed(reopened, in: alice) == ["alice/a.jpg", "alice/shared/back.jpg", "alice/y.jpg"])
    }
}
