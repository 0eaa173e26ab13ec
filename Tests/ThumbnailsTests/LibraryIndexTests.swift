import Foundation
import Rendering
import Synchronization
import Testing
@testable import Thumbnails

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
}
