import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// The index keeps each listed image's placeholder with the identity it was made from: kept
/// across a restart, dropped when the file changes or goes, never given for another version.
@Suite struct ThumbhashStoreTests {
    let hash: [UInt8] = [0x1D, 0xD7, 0x09, 0x15, 0x82, 0x4D, 0x3C, 0x89, 0xAF, 0x68]

    func identity(_ path: String) throws -> SourceIdentity {
        var st = stat()
        try #require(stat(path, &st) == 0)
        return SourceIdentity(size: Int(st.st_size), modifiedNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    /// A library of copies of Landscape_1.jpg named `names`, scanned, with its database path.
    /// The index is optional so that a test can let it go (`nil`) and open the database again.
    func scanned(_ names: [String]) throws -> (dir: TemporaryDirectory, library: Library, database: String, index: LibraryIndex?) {
        let dir = TemporaryDirectory()
        for name in names { dir.write(name, [UInt8](Fixtures.photo("Landscape_1.jpg"))) }
        let library = try Library(root: dir.path)
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite")
        index.rescan()
        return (dir, library, dir.path + "-index.sqlite", index)
    }

    func record(_ index: LibraryIndex, _ name: String) -> AssetRecord? {
        index.listing(order: .oldest, offset: 0, limit: 100).items.first { $0.path.description == name }
    }

    @Test func keptAcrossARestartAndDroppedWhenTheFileChanges() throws {
        let photo = [UInt8](Fixtures.photo("Landscape_1.jpg"))
        var (dir, library, database, index) = try scanned(["a.jpg", "b.jpg"])
        defer { unlink(database) }
        let a = try identity(dir.path + "/a.jpg"), b = try identity(dir.path + "/b.jpg")
        #expect(index!.needsThumbhash(DiskPath("a.jpg"), source: a))
        #expect(index!.thumbhash(of: try #require(record(index!, "a.jpg"))) == nil)
        index!.storeThumbhash(hash, for: DiskPath("a.jpg"), source: a)
        index!.storeThumbhash([], for: DiskPath("b.jpg"), source: b)   // cannot be rendered
        // Another identity (a render of a version since replaced) is not kept.
        index!.storeThumbhash(hash, for: DiskPath("b.jpg"), source: SourceIdentity(size: b.size + 1, modifiedNanoseconds: 1))
        #expect(!index!.needsThumbhash(DiskPath("a.jpg"), source: a))
        #expect(!index!.needsThumbhash(DiskPath("b.jpg"), source: b))
        #expect(index!.thumbhash(of: try #require(record(index!, "a.jpg"))) == hash)
        #expect(index!.thumbhash(of: try #require(record(index!, "b.jpg"))) == nil)
        #expect(index!.thumbhashCounts == (known: 1, unrenderable: 1))

        index = nil
        index = try LibraryIndex(library: library, databasePath: database)
        #expect(index!.thumbhash(of: try #require(record(index!, "a.jpg"))) == hash)
        #expect(!index!.needsThumbhash(DiskPath("b.jpg"), source: b))   // not tried again after a restart
        #expect(index!.thumbhashCounts == (known: 1, unrenderable: 1))

        // a.jpg replaced (another size), b.jpg deleted: both dropped at the scan that sees it.
        dir.write("a.jpg", photo + [0xFF, 0xD9])
        unlink(dir.path + "/b.jpg")
        index!.rescan()
        let replaced = try #require(record(index!, "a.jpg"))
        #expect(replaced.bytes == photo.count + 2)
        #expect(index!.thumbhash(of: replaced) == nil)
        #expect(index!.needsThumbhash(DiskPath("a.jpg"), source: try identity(dir.path + "/a.jpg")))
        #expect(index!.thumbhashCounts == (known: 0, unrenderable: 0))
        index = nil
        index = try LibraryIndex(library: library, databasePath: database)
        #expect(index!.thumbhashCounts == (known: 0, unrenderable: 0))
    }

    /// A file changed while the server was down: its row is not loaded (nor kept).
    @Test func aRowOfAnotherVersionIsNotLoaded() throws {
        var (dir, library, database, index) = try scanned(["a.jpg"])
        defer { unlink(database) }
        index!.storeThumbhash(hash, for: DiskPath("a.jpg"), source: try identity(dir.path + "/a.jpg"))
        index = nil
        // The record's identity is the index's until a scan: edit the row to another identity.
        let db = try SQLiteDatabase(path: database)
        try db.execute("UPDATE thumbhashes SET bytes = bytes + 1")
        index = try LibraryIndex(library: library, databasePath: database)
        #expect(index!.thumbhashCounts == (known: 0, unrenderable: 0))
        let count = try db.prepare("SELECT count(*) FROM thumbhashes")
        count.bind([])
        _ = try count.step()
        #expect(count.integer(0) == 0)
    }
}

/// What a node of a cluster feeds its peers (`madeThumbhashes`) and keeps of theirs
/// (`adoptThumbhash`): only placeholders it made are fed, in order, from a cursor; another
/// node's is kept only for a file listed here with the same identity, and never over one here.
@Suite struct PlaceholderFeedTests {
    let store = ThumbhashStoreTests()
    let hash: [UInt8] = [0x1D, 0xD7, 0x09, 0x15, 0x82, 0x4D, 0x3C, 0x89, 0xAF, 0x68]
    let other: [UInt8] = [0x23, 0x08, 0x0A, 0x0D, 0x02, 0x78, 0x77, 0x88, 0x80, 0x7F]

    @Test func theFeedGivesWhatWasMadeHereFromACursor() throws {
        var (dir, library, database, index) = try store.scanned(["a.jpg", "b.jpg", "c.jpg", "d.jpg"])
        defer { unlink(database) }
        let id = { (name: String) in try store.identity(dir.path + "/" + name) }
        index!.storeThumbhash(hash, for: DiskPath("c.jpg"), source: try id("c.jpg"))
        index!.storeThumbhash([], for: DiskPath("d.jpg"), source: try id("d.jpg"))        // a note, not a placeholder
        #expect(index!.adoptThumbhash(other, for: DiskPath("b.jpg"), source: try id("b.jpg")) == .kept)   // a peer's: not fed again
        index!.storeThumbhash(other, for: DiskPath("a.jpg"), source: try id("a.jpg"))

        let all = index!.madeThumbhashes(after: 0, limit: 10)
        #expect(all.entries == [LibraryIndex.FedThumbhash(path: "c.jpg", identity: try id("c.jpg"), hash: hash),
                                LibraryIndex.FedThumbhash(path: "a.jpg", identity: try id("a.jpg"), hash: other)])
        #expect(all.next == 2 && !all.more)
        let first = index!.madeThumbhashes(after: 0, limit: 1)
        #expect(first.entries.map(\.path) == ["c.jpg"] && first.next == 1 && first.more)
        let rest = index!.madeThumbhashes(after: first.next, limit: 1)
        #expect(rest.entries.map(\.path) == ["a.jpg"] && rest.next == 2 && !rest.more)
        let none = index!.madeThumbhashes(after: 2, limit: 1)
        #expect(none.entries.isEmpty && none.next == 2 && !none.more)

        // A start feeds the stored placeholders the node owns, a peer's included when it owns them.
        let epoch = index!.placeholderFeedEpoch
        index = nil
        index = try LibraryIndex(library: library, databasePath: database)
        #expect(index!.persisted)
        #expect(index!.placeholderFeedEpoch != epoch)
        #expect(index!.madeThumbhashes(after: 0, limit: 10).entries.isEmpty)
        index!.feedStoredThumbhashes { $0 != DiskPath("c.jpg") }
        #expect(index!.madeThumbhashes(after: 0, limit: 10).entries.map(\.path) == ["a.jpg", "b.jpg"])
    }

    @Test func aPeersPlaceholderIsKeptOnlyForTheSameFileAndNeverOverOneHere() throws {
        var (dir, library, database, index) = try store.scanned(["a.jpg", "b.jpg"])
        defer { unlink(database) }
        let a = try store.identity(dir.path + "/a.jpg"), b = try store.identity(dir.path + "/b.jpg")
        // Another size at the same mtime, an earlier mtime: stale; a later mtime, an unlisted
        // path: not listed yet (this node's scan is behind); an empty hash: not needed. All left out.
        #expect(index!.adoptThumbhash(hash, for: DiskPath("a.jpg"), source: SourceIdentity(size: a.size + 1, modifiedNanoseconds: a.modifiedNanoseconds)) == .stale)
        #expect(index!.adoptThumbhash(hash, for: DiskPath("a.jpg"), source: SourceIdentity(size: a.size, modifiedNanoseconds: a.modifiedNanoseconds - 1)) == .stale)
        #expect(index!.adoptThumbhash(hash, for: DiskPath("a.jpg"), source: SourceIdentity(size: a.size, modifiedNanoseconds: a.modifiedNanoseconds + 1)) == .notYetListed)
        #expect(index!.adoptThumbhash(hash, for: DiskPath("z.jpg"), source: a) == .notYetListed)
        #expect(index!.adoptThumbhash([], for: DiskPath("a.jpg"), source: a) == .notNeeded)
        #expect(index!.needsThumbhash(DiskPath("a.jpg"), source: a))
        #expect(index!.thumbhashCounts == (known: 0, unrenderable: 0))
        // The same file: kept, listed, and in the database.
        #expect(index!.adoptThumbhash(hash, for: DiskPath("a.jpg"), source: a) == .kept)
        #expect(index!.thumbhash(of: try #require(store.record(index!, "a.jpg"))) == hash)
        #expect(!index!.needsThumbhash(DiskPath("a.jpg"), source: a))
        // One made here (or a note that the file cannot be rendered) is not replaced.
        #expect(index!.adoptThumbhash(other, for: DiskPath("a.jpg"), source: a) == .notNeeded)
        index!.storeThumbhash([], for: DiskPath("b.jpg"), source: b)
        #expect(index!.adoptThumbhash(other, for: DiskPath("b.jpg"), source: b) == .notNeeded)
        #expect(index!.thumbhash(of: try #require(store.record(index!, "a.jpg"))) == hash)
        index = nil
        index = try LibraryIndex(library: library, databasePath: database)
        #expect(index!.persisted)
        #expect(index!.thumbhash(of: try #require(store.record(index!, "a.jpg"))) == hash)
    }
}
