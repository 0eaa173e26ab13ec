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
