import Foundation
import Testing
@testable import ThumbServer

/// `GET /assets` and the persisted library index (docs/API.md, "Listing").
@Suite struct ListingTests {
    /// A library of real photos with known capture times:
    /// galaxy (EXIF 2011-04-02 18:30:10), sony (EXIF 2001-11-27 18:33:44), kodak (EXIF 2000-10-26
    /// 16:46:51), and two photos without EXIF dates whose mtime is set to 2005-06-07 08:09:10 UTC
    /// (a tie, broken by path), plus a text file that must not be listed.
    final class DatedLibrary {
        let root = NSTemporaryDirectory() + "thumbd-dated-\(UUID().uuidString)"
        static let tieSeconds = 1_118_131_750  // 2005-06-07T08:09:10Z

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
            let photos = Paths.fixturePhotos
            try fm.copyItem(atPath: photos + "/galaxy-s-orientation6-gps-vga.jpg", toPath: root + "/sub/galaxy.jpg")
            try fm.copyItem(atPath: photos + "/sony-cybershot-small-orientation6.jpg", toPath: root + "/sony.jpg")
            try fm.copyItem(atPath: photos + "/kodak-dc210-1998-vga.jpg", toPath: root + "/kodak.jpg")
            try fm.copyItem(atPath: photos + "/Landscape_1.jpg", toPath: root + "/b-tie.jpg")
            try fm.copyItem(atPath: photos + "/Landscape_6.jpg", toPath: root + "/a-tie.jpg")
            try Data("not an image".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
            for name in ["b-tie.jpg", "a-tie.jpg"] { setModified(root + "/" + name, seconds: Self.tieSeconds) }
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    static func setModified(_ path: String, seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        utimensat(AT_FDCWD, path, &times, 0)
    }

    func items(_ response: TestResponse) -> [[String: Any]] { response.json["items"] as? [[String: Any]] ?? [] }

    @Test func newestAndOldestOrderWithTiesByPath() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let newest = try server.get("/assets")
        #expect(newest.status == 200)
        #expect(newest.json["total"] as? Int == 5)
        #expect(items(newest).map { $0["path"] as? String } == ["sub/galaxy.jpg", "a-tie.jpg", "b-tie.jpg", "sony.jpg", "kodak.jpg"])
        let oldest = try server.get("/assets?sort=oldest")
        #expect(items(oldest).map { $0["path"] as? String } == ["kodak.jpg", "sony.jpg", "a-tie.jpg", "b-tie.jpg", "sub/galaxy.jpg"])
        let galaxy = try #require(items(newest).first)
        #expect(galaxy["taken"] as? String == "2011-04-02T18:30:10+00:00")
        #expect(galaxy["width"] as? Int == 480)    // 640x480 stored, orientation 6
        #expect(galaxy["height"] as? Int == 640)
        #expect(galaxy["bytes"] as? Int == 101_329)
        let tie = items(newest)[1]
        #expect(tie["taken"] as? String == "2005-06-07T08:09:10+00:00")
        #expect(tie["modified"] as? String == "2005-06-07T08:09:10+00:00")
        #expect(tie["width"] as? Int == 1800 && tie["height"] as? Int == 1200)  // Landscape_6: 1200x1800 stored, orientation 6
        let page = try server.get("/assets?sort=oldest&offset=1&limit=2")
        #expect(page.json["offset"] as? Int == 1)
        #expect(items(page).map { $0["path"] as? String } == ["sony.jpg", "a-tie.jpg"])
        #expect(items(try server.get("/assets?offset=99")).isEmpty)
        for bad in ["/assets?sort=sideways", "/assets?limit=10001", "/assets?offset=-1", "/assets?limit=x"] {
            #expect(try server.get(bad).status == 400, "\(bad)")
        }
    }

    @Test func aRestartReusesThePersistedIndexWithoutReadingHeaders() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        #expect(server.thumbd.service.index.headerReads == 6)  // five photos and the text file
        try server.restart()
        #expect(try server.get("/assets").json["total"] as? Int == 5)  // answered before any scan
        server.waitForInitialScan()
        #expect(server.thumbd.service.index.rescan().headerReads == 0)
        #expect(server.thumbd.service.index.headerReads == 0)
    }

    @Test func aDamagedIndexFileIsRebuiltNotFatal() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        server.stop()
        let database = server.cacheDirectory + "/index.sqlite"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try Data(String(repeating: "this is not sqlite ", count: 300).utf8).write(to: URL(fileURLWithPath: database))
        try server.restart()
        server.waitForInitialScan()
        #expect(try server.get("/assets").json["total"] as? Int == 5)
        #expect(server.thumbd.service.index.headerReads == 6)   // rebuilt from the headers
    }

    @Test func queryValuesArePercentDecoded() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let page = try server.get("/assets?sort=%6Fldest&limit=%31")
        #expect(page.status == 200)
        #expect(items(page).map { $0["path"] as? String } == ["kodak.jpg"])
        let png = try server.get("/thumbnails/5/kodak.jpg?format=%70ng")
        #expect(png.image?.format == "png")
    }

    @Test func addedReplacedAndDeletedFilesAreReflected() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let index = server.thumbd.service.index
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg", toPath: library.root + "/new.jpg")
        try FileManager.default.removeItem(atPath: library.root + "/sony.jpg")
        try FileManager.default.removeItem(atPath: library.root + "/a-tie.jpg")
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/sony-cybershot-small-orientation6.jpg",
                                         toPath: library.root + "/a-tie.jpg")
        let summary = index.rescan()
        #expect(summary.added == 1)
        #expect(summary.changed == 1)
        #expect(summary.removed == 1)
        #expect(summary.headerReads == 2)
        let paths = items(try server.get("/assets?sort=oldest")).map { $0["path"] as? String }
        #expect(paths == ["kodak.jpg", "new.jpg", "a-tie.jpg", "b-tie.jpg", "sub/galaxy.jpg"])
        let replaced = items(try server.get("/assets?sort=oldest"))[2]
        #expect(replaced["taken"] as? String == "2001-11-27T18:33:44+00:00")  // sony's EXIF date now
        #expect(replaced["width"] as? Int == 450 && replaced["height"] as? Int == 311)
    }

    @Test func theWatcherPicksUpChangesWithinSeconds() throws {
        let library = try DatedLibrary()
        let server = try ServerHarness(library: library.root) { $0.indexRescanSeconds = 0.2; $0.libraryWatch = true }
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: library.root + "/late.jpg")
        let deadline = Date().addingTimeInterval(5)
        var total = 0
        while Date() < deadline {
            total = try server.get("/assets").json["total"] as? Int ?? 0
            if total == 6 { break }
            usleep(100_000)
        }
        #expect(total == 6)
    }
}
