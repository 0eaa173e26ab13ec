import Foundation
@testable import Library
import Rendering
import Synchronization
import Testing
import TestSupport

/// The listing never hides a file for a reason that may pass: a header that could not be read
/// now, or a directory that could not be listed now.
@Suite struct LibraryIndexTests {
    func library(_ files: [String]) throws -> (TemporaryDirectory, Library) {
        let dir = TemporaryDirectory()
        for file in files { dir.write(file, [UInt8](Fixtures.photo("Landscape_1.jpg"))) }
        return (dir, try Library(root: dir.path))
    }

    func listed(_ index: LibraryIndex) -> [String] {
        index.listing(order: .oldest, offset: 0, limit: 100).items.map(\.path.description).sorted()
    }

    @Test func aFileThatCouldNotBeReadIsTriedAgainNotTakenForANonImage() throws {
        let (dir, library) = try library(["late.jpg", "notes.jpg", "ok.jpg"])
        let calls = Mutex<[String: Int]>([:])
        let probe: LibraryIndex.Probe = { path in
            let name = String(path.description.split(separator: "/").last!)
            let n = calls.withLock { $0[name, default: 0] += 1; return $0[name]! }
            switch name {
            case "late.jpg" where n == 1:   // unreadable at first (mode 000, EMFILE, EIO)
                return .failure(RenderError(kind: .internalFailure, message: "cannot open the source: Permission denied"))
            case "notes.jpg":
                return .failure(RenderError(kind: .unsupportedSource, message: "not an image"))
            default:
                return LibraryIndex.probeHeader(path)
            }
        }
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite", probe: probe)
        defer { unlink(dir.path + "-index.sqlite") }
        let first = index.rescan()
        #expect(listed(index) == ["ok.jpg"])
        #expect(first.unreadableFiles == 1)
        #expect(index.unreadable.files == 1)
        index.rescan()
        #expect(listed(index) == ["late.jpg", "ok.jpg"])   // read this time
        #expect(index.unreadable.files == 0)
        index.rescan()
        #expect(calls.withLock { $0 } == ["late.jpg": 2, "notes.jpg": 1, "ok.jpg": 1])   // a non-image is read once
    }

    /// A file in a format the listing takes whose header does not decode here (a lossless
    /// JPEG, SOF3, which Debian 12's libjpeg-turbo 2.1 refuses) was left out in silence, as a
    /// text is (found by a fresh user); now it is counted (`undecodableFiles`, `/stats`), read
    /// once while it does not change, and counted again after a restart (it is kept in memory
    /// only); a listed photo replaced by one leaves the listing; one made decodable is listed,
    /// and one removed is no longer counted. A text, in no format thumbd reads, is not counted.
    @Test func aFileWhoseHeaderDoesNotDecodeIsCountedAndNotListed() throws {
        let (dir, library) = try library(["ok.jpg", "replaced.jpg"])
        // SOI, then a lossless (SOF3) frame header of 16x16, one component: libjpeg-turbo 2.1
        // stops at the marker ("Unsupported JPEG process: SOF type 0xc3").
        let sof3: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC3, 0x00, 0x0B, 0x08, 0x00, 0x10, 0x00, 0x10, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9]
        dir.write("lossless.jpg", sof3)
        dir.write("notes.txt", Array("not a photo\n".utf8))
        let database = dir.path + "-index.sqlite"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) } }
        do {
            let index = try LibraryIndex(library: library, databasePath: database)
            #expect(index.rescan().headerReads == 4)
            #expect(listed(index) == ["ok.jpg", "replaced.jpg"])
            #expect(index.undecodableFiles == 1)
            #expect(index.rescan().headerReads == 0)   // not read again while it does not change
            #expect(index.undecodableFiles == 1)
            dir.write("replaced.jpg", sof3)
            let replaced = index.rescan()
            #expect(replaced.headerReads == 1 && replaced.removed == 1)
            #expect(listed(index) == ["ok.jpg"])
            #expect(index.undecodableFiles == 2)
            dir.write("lossless.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
            #expect(index.rescan().added == 1)
            #expect(listed(index) == ["lossless.jpg", "ok.jpg"])
            #expect(index.undecodableFiles == 1)
        }
        let reopened = try LibraryIndex(library: library, databasePath: database)
        #expect(reopened.undecodableFiles == 0)
        #expect(reopened.rescan().headerReads == 1)   // replaced.jpg, not kept as a non-image
        #expect(reopened.undecodableFiles == 1)
        #expect(listed(reopened) == ["lossless.jpg", "ok.jpg"])
        #expect(unlink(dir.path + "/replaced.jpg") == 0)
        reopened.rescan()
        #expect(reopened.undecodableFiles == 0)
    }

    /// One rule for the listing and for URLs (`Library.target(of:)`): a symlink to a directory
    /// inside the root is followed by both, as a link to a file is; one that leads outside, or
    /// back up the tree (a loop), is listed by neither walk nor served from outside.
    @Test func aLinkedDirectoryInsideTheRootIsListedAndServedAlike() throws {
        let (dir, library) = try library(["2024/a.jpg", "2024/deeper/b.jpg"])
        let outside = TemporaryDirectory("thumbd-outside")
        outside.write("secret.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        #expect(symlink("2024", dir.path + "/linked") == 0)            // relative, inside
        #expect(symlink(outside.path, dir.path + "/elsewhere") == 0)   // outside the root
        #expect(symlink(".", dir.path + "/loop") == 0)                 // the root itself
        #expect(symlink("..", dir.path + "/2024/up") == 0)             // an ancestor
        #expect(symlink("missing", dir.path + "/dangling") == 0)
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite")
        defer { unlink(dir.path + "-index.sqlite") }
        index.rescan()
        let paths = listed(index)
        #expect(paths == ["2024/a.jpg", "2024/deeper/b.jpg", "linked/a.jpg", "linked/deeper/b.jpg"])
        // Every listed path is served, to the same file as its real path.
        for path in paths {
            let real = path.hasPrefix("linked/") ? "2024/" + path.dropFirst("linked/".count) : path
            #expect(try library.resolve(path.split(separator: "/").map(String.init)).absolutePath
                == DiskPath(library.root + "/" + real), "\(path)")
        }
        #expect(throws: LibraryError.outsideRoot) { try library.resolve(["elsewhere", "secret.jpg"]) }
        #expect(throws: LibraryError.notFound) { try library.resolve(["linked"]) }   // a directory is no asset
        #expect(throws: LibraryError.notFound) { try library.resolve(["dangling"]) }
        // Nor served through a loop, however spelled: a URL that comes back to a directory on
        // its way names nothing (else one file would have endless URLs, each its own cache key).
        for url in [["loop", "2024", "a.jpg"], ["loop", "loop", "2024", "a.jpg"], ["2024", "up", "2024", "a.jpg"],
                    ["linked", "up", "linked", "a.jpg"], ["2024", "deeper", "..", "a.jpg"]] {
            #expect(throws: LibraryError.notFound, "\(url)") { try library.resolve(url) }
        }
    }

    @Test func aDirectoryThatCannotBeListedKeepsItsFilesListed() throws {
        let (dir, library) = try library(["2024/a.jpg", "2024/b.jpg", "2025/c.jpg"])
        let failing = Mutex<String?>(nil)
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite",
                                     probe: LibraryIndex.probeHeader, openDirectory: { path in
            if let suffix = failing.withLock({ $0 }), path.description.hasSuffix(suffix) {
                errno = EMFILE
                return nil
            }
            return path.withCString { opendir($0) }
        })
        defer { unlink(dir.path + "-index.sqlite") }
        index.rescan()
        #expect(listed(index) == ["2024/a.jpg", "2024/b.jpg", "2025/c.jpg"])
        failing.withLock { $0 = "/2024" }
        let summary = index.rescan()
        #expect(summary.removed == 0)
        #expect(summary.unreadableDirectories == 1)
        #expect(listed(index) == ["2024/a.jpg", "2024/b.jpg", "2025/c.jpg"])
        failing.withLock { $0 = dir.path.split(separator: "/").last.map { "/" + $0 } }   // the root itself
        #expect(index.rescan().removed == 0)
        #expect(listed(index).count == 3)
        failing.withLock { $0 = nil }
        try FileManager.default.removeItem(atPath: dir.path + "/2024")   // really gone: dropped
        #expect(index.rescan().removed == 2)
        #expect(listed(index) == ["2025/c.jpg"])
        #expect(index.unreadable.directories == 0)
    }

    /// An index written under another list of formats (an earlier thumbd read every loader
    /// libvips had, so an SVG was listed) is read again at its first scan, whatever the files'
    /// sizes and mtimes: the SVG stops being listed. A file that cannot be read then is tried
    /// again at the next scan, and only it; once all were read, nothing is read again.
    @Test func anIndexWrittenUnderAnotherListOfFormatsIsReadAgain() throws {
        let (dir, library) = try library(["a.jpg"])
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"/>"#
        #expect(FileManager.default.createFile(atPath: dir.path + "/drawing.svg", contents: Data(svg.utf8)))
        let database = dir.path + "-index.sqlite"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) } }
        do {   // as the earlier list had it: the drawing is an image, and no revision is stamped
            let everything: LibraryIndex.Probe = { path in
                path.description.hasSuffix(".svg")
                    ? .success(SourceInfo(width: 40, height: 30, orientation: 1, pages: 1, hasAlpha: true, loader: "svgload"))
                    : LibraryIndex.probeHeader(path)
            }
            let index = try LibraryIndex(library: library, databasePath: database, probe: everything)
            index.rescan()
            #expect(listed(index) == ["a.jpg", "drawing.svg"])
        }
        do {
            let db = try SQLiteDatabase(path: database)
            try db.execute("PRAGMA user_version = 0")
        }
        do {
            let failures = Mutex(1)   // a.jpg cannot be read at the first scan (EMFILE, say)
            let flaky: LibraryIndex.Probe = { path in
                if path.description.hasSuffix("a.jpg"), failures.withLock({ n in defer { n -= 1 }; return n > 0 }) {
                    return .failure(RenderError(kind: .internalFailure, message: "cannot open the source: Too many open files"))
                }
                return LibraryIndex.probeHeader(path)
            }
            let index = try LibraryIndex(library: library, databasePath: database, probe: flaky)
            #expect(listed(index) == ["a.jpg", "drawing.svg"])   // what was listed, until the scan
            let first = index.rescan()
            #expect(first.headerReads == 2)
            #expect(first.unreadableFiles == 1)
            #expect(listed(index) == ["a.jpg"])   // the drawing decided again; a.jpg kept as listed
            #expect(index.rescan().headerReads == 1)   // a.jpg, read this time
            #expect(index.rescan().headerReads == 0)
        }
        let reopened = try LibraryIndex(library: library, databasePath: database)
        #expect(listed(reopened) == ["a.jpg"])
        #expect(reopened.rescan().headerReads == 0)   // stamped with the current list
    }

    @Test func userFilesAtSQLitesSideFileNamesAreLeftAlone() throws {
        let (dir, library) = try library(["a.jpg"])
        let database = dir.path + "-index.sqlite"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) } }
        // thumbd's own index, written and closed: its side files pass as SQLite's.
        do {
            let index = try LibraryIndex(library: library, databasePath: database)
            index.rescan()
            #expect(index.persisted)
        }
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
            #expect(LibraryIndex.isDatabaseSideFile(database + suffix), "thumbd's own \(suffix)")
        }
        let reopened = try LibraryIndex(library: library, databasePath: database)
        #expect(reopened.persisted)
        #expect(reopened.notPersistedBecause == nil)
        #expect(reopened.listing(order: .oldest, offset: 0, limit: 10).total == 1)
        // A user's notes at a side file's name: not opened, not written, not removed.
        for suffix in ["-wal", "-journal", "-shm"] {
            for existing in ["-wal", "-shm", "-journal"] { unlink(database + existing) }
            let notes = Array("user notes \(suffix)".utf8)
            #expect(FileManager.default.createFile(atPath: database + suffix, contents: Data(notes)))
            let index = try LibraryIndex(library: library, databasePath: database)
            index.rescan()
            #expect(!index.persisted, "beside a foreign \(suffix)")
            #expect(index.notPersistedBecause == "\(database)\(suffix) is not SQLite's, and opening the database would overwrite it")
            #expect(index.listing(order: .oldest, offset: 0, limit: 10).total == 1)   // listed, in memory
            #expect(FileManager.default.contents(atPath: database + suffix).map(Array.init) == notes)
        }
    }

    /// `update` brings only the paths it is given up to date: files read again when they
    /// changed, subtrees walked, and what went dropped, with and under it; the rest of the tree
    /// is not looked at (a change there waits for its own update or a rescan).
    @Test func anUpdateRereadsOnlyThePathsItIsGiven() throws {
        let (dir, library) = try library(["a.jpg", "b.jpg", "2024/c.jpg", "2024/deep/d.jpg", "old/e.jpg"])
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite")
        defer { unlink(dir.path + "-index.sqlite") }
        index.rescan()
        #expect(listed(index) == ["2024/c.jpg", "2024/deep/d.jpg", "a.jpg", "b.jpg", "old/e.jpg"])
        let reads = index.headerReads
        let photo = [UInt8](Fixtures.photo("Landscape_6.jpg"))
        dir.write("new.jpg", photo)              // added
        dir.write("b.jpg", photo)                // replaced (another size)
        dir.write("2024/deep/f.jpg", photo)      // added inside a subtree given whole
        #expect(rename(dir.path + "/old", dir.path + "/renamed") == 0)   // a directory renamed
        dir.write("untold.jpg", photo)           // not given: not seen
        #expect(unlink(dir.path + "/a.jpg") == 0)                       // deleted
        dir.write(".hidden/g.jpg", photo)
        let summary = index.update(["new.jpg", "b.jpg", "2024", "2024/deep/f.jpg", "old", "renamed", "a.jpg", ".hidden/g.jpg"])
        #expect(listed(index) == ["2024/c.jpg", "2024/deep/d.jpg", "2024/deep/f.jpg", "b.jpg", "new.jpg", "renamed/e.jpg"])
        #expect(summary.added == 3)      // new.jpg, 2024/deep/f.jpg, renamed/e.jpg
        #expect(summary.changed == 1)    // b.jpg
        #expect(summary.removed == 2)    // a.jpg, old/e.jpg
        #expect(index.headerReads - reads == 4)   // 2024/c.jpg and d.jpg were walked, not read again
        #expect(index.listing(order: .newest, offset: 0, limit: 100).items.first { $0.path == "b.jpg" }?.bytes == photo.count)
        index.rescan()
        #expect(listed(index).contains("untold.jpg"))
    }

    @Test func nestedUpdatePathsCollapseIntoTheOutermost() {
        #expect(LibraryIndex.outermost(["a/b/c.jpg", "a/b", "a/bc.jpg", "x.jpg", "a/b/c.jpg"]) == ["a/b", "a/bc.jpg", "x.jpg"])
        #expect(LibraryIndex.outermost(["a/b", ""]) == [""])
    }

    /// A few changes against a large listing are merged into the sorted listings rather than
    /// sorted anew: the orders come out exactly as a fresh index's.
    @Test func changesMergedIntoTheListingsGiveTheOrderOfAFreshScan() throws {
        let photos = ["Landscape_1.jpg", "Landscape_6.jpg", "kodak-dc210-1998-vga.jpg", "galaxy-s-orientation6-gps-vga.jpg"]
        let dir = TemporaryDirectory()
        for i in 0..<60 { dir.write("\(i % 7)/p\(i).jpg", [UInt8](Fixtures.photo(photos[i % photos.count]))) }
        let library = try Library(root: dir.path)
        let index = try LibraryIndex(library: library, databasePath: ":memory:")
        index.rescan()
        for (i, name) in ["0/new-a.jpg", "3/new-b.jpg", "new-c.jpg"].enumerated() {
            dir.write(name, [UInt8](Fixtures.photo(photos[(i + 1) % photos.count])))
        }
        #expect(unlink(dir.path + "/2/p2.jpg") == 0)
        dir.write("5/p5.jpg", [UInt8](Fixtures.photo("kodak-dc210-1998-vga.jpg")))   // replaced
        index.update(["0/new-a.jpg", "3/new-b.jpg", "new-c.jpg", "2/p2.jpg", "5/p5.jpg"])
        let fresh = try LibraryIndex(library: library, databasePath: ":memory:")
        fresh.rescan()
        for order in [ListingOrder.newest, .oldest] {
            let merged = index.listing(order: order, offset: 0, limit: 100).items.map(\.path)
            #expect(merged.count == 62)
            #expect(merged == fresh.listing(order: order, offset: 0, limit: 100).items.map(\.path))
        }
    }

    /// A change under a directory that a symlink also reaches is a change under the link's
    /// path too: the walk lists the files under both, so an update of one updates the other.
    /// Found by a fresh-eyes session (the link's path kept a deleted photo for up to an hour).
    @Test func anUpdateUnderALinkedDirectoryUpdatesItsPathUnderTheLink() throws {
        let (dir, library) = try library(["photos/a.jpg"])
        #expect(mkdir(dir.path + "/links", 0o755) == 0)
        #expect(symlink("../photos", dir.path + "/links/dir-link") == 0)
        #expect(symlink("../links", dir.path + "/photos/back") == 0)   // a link within the linked tree
        let index = try LibraryIndex(library: library, databasePath: ":memory:")
        index.rescan()
        #expect(listed(index) == ["links/dir-link/a.jpg", "photos/a.jpg"])
        dir.write("photos/new.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        index.update(["photos/new.jpg"])
        #expect(listed(index) == ["links/dir-link/a.jpg", "links/dir-link/new.jpg", "photos/a.jpg", "photos/new.jpg"])
        #expect(unlink(dir.path + "/photos/a.jpg") == 0)
        index.update(["photos/a.jpg"])
        #expect(listed(index) == ["links/dir-link/new.jpg", "photos/new.jpg"])
        #expect(LibraryIndex.withAliases(["photos/x.jpg"], links: ["links/dir-link": "photos"]).sorted()
                == ["links/dir-link/x.jpg", "photos/x.jpg"])
    }

    /// What could not be read is counted by updates too, not only by whole rescans (with the
    /// watch, those come once an hour): a file unreadable when an update looked at it counts,
    /// and stops counting when a later update reads it. Found by a fresh-eyes session.
    @Test func updatesCountWhatTheyCouldNotRead() throws {
        let (dir, library) = try library(["ok.jpg"])
        let locked = Mutex(true)
        let probe: LibraryIndex.Probe = { path in
            if path.description.hasSuffix("late.jpg"), locked.withLock({ $0 }) {
                return .failure(RenderError(kind: .internalFailure, message: "cannot open the source: Permission denied"))
            }
            return LibraryIndex.probeHeader(path)
        }
        let index = try LibraryIndex(library: library, databasePath: dir.path + "-index.sqlite", probe: probe)
        defer { unlink(dir.path + "-index.sqlite") }
        index.rescan()
        #expect(index.unreadable.files == 0)
        dir.write("late.jpg", [UInt8](Fixtures.photo("Landscape_6.jpg")))
        index.update(["late.jpg"])
        #expect(index.unreadable.files == 1)
        #expect(listed(index) == ["ok.jpg"])
        index.update(["ok.jpg"])            // another path: the count stands
        #expect(index.unreadable.files == 1)
        locked.withLock { $0 = false }      // chmod'ed
        index.update(["late.jpg"])
        #expect(index.unreadable.files == 0)
        #expect(listed(index) == ["late.jpg", "ok.jpg"])
    }

    /// A write to `index.sqlite` that fails (here a trigger makes SQLite refuse it, as a full disk
    /// or an I/O error would) leaves the listing and the placeholders right in memory, and is
    /// counted (`failedWrites`, `/stats` `library.index_write_errors` and
    /// `placeholders.write_errors`) instead of vanishing.
    @Test func aFailedDatabaseWriteIsCountedAndTheMemoryStaysRight() throws {
        let (dir, library) = try library(["a.jpg"])
        let database = dir.path + "-index.sqlite"
        defer { unlink(database) }
        let index = try LibraryIndex(library: library, databasePath: database)
        #expect(index.persisted)
        index.rescan()
        #expect(index.failedWrites == (0, 0))
        let a = try #require(index.listing(order: .oldest, offset: 0, limit: 10).items.first)
        index.storeThumbhash([1, 2, 3], for: a.path, source: a.identity)
        #expect(index.failedWrites == (0, 0))

        // Another connection makes every later write of either table fail.
        let saboteur = try SQLiteDatabase(path: database)
        try saboteur.execute("""
            CREATE TRIGGER refuse_assets BEFORE INSERT ON assets BEGIN SELECT RAISE(ABORT, 'refused'); END;
            CREATE TRIGGER refuse_thumbhashes BEFORE INSERT ON thumbhashes BEGIN SELECT RAISE(ABORT, 'refused'); END;
            CREATE TRIGGER refuse_thumbhash_deletes BEFORE DELETE ON thumbhashes BEGIN SELECT RAISE(ABORT, 'refused'); END;
            """)
        dir.write("b.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        index.rescan()
        #expect(listed(index) == ["a.jpg", "b.jpg"])   // in memory all the same
        #expect(index.failedWrites == (1, 0))
        let b = try #require(index.listing(order: .oldest, offset: 0, limit: 10).items.first { $0.path.description.hasSuffix("b.jpg") })
        index.storeThumbhash([4, 5, 6], for: b.path, source: b.identity)
        index.forgetThumbhash(for: a.path)
        #expect(index.failedWrites == (1, 2))
        #expect(index.thumbhashCounts.known == 1)   // b's, kept in memory; a's forgotten there
    }
}
