import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// Videos in the index (README "Videos"): the schema's `duration_ms` column, and a database of
/// an earlier thumbd (no such column, formats revision 2, its videos decided as non-images)
/// brought up to date at open without losing its records.
@Suite struct VideoIndexTests {
    @Test func anIndexFromBeforeVideosGainsTheColumnAndReadsItsVideosAgain() throws {
        let dir = TemporaryDirectory()
        dir.write("a.jpg", [UInt8](Fixtures.photo("Landscape_1.jpg")))
        try FileManager.default.copyItem(atPath: VideoFixtures.path("h264.mp4"), toPath: dir.path + "/clip.mp4")
        let library = try Library(root: dir.path)
        let database = dir.path + "-index.sqlite"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) } }
        var clip = stat(), photo = stat()
        stat(dir.path + "/clip.mp4", &clip)
        stat(dir.path + "/a.jpg", &photo)
        do {   // as thumbd wrote it before videos: eight columns, revision 2, the clip not an image
            let db = try SQLiteDatabase(path: database)
            try db.execute("""
                CREATE TABLE assets (path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, is_image INTEGER NOT NULL,
                    width INTEGER, height INTEGER, taken_ms INTEGER, taken_offset_min INTEGER);
                PRAGMA user_version = 2;
                INSERT INTO assets VALUES ('a.jpg', \(photo.st_size), \(SourceIdentity(photo).modifiedNanoseconds), 1, 1800, 1200, 0, 0);
                INSERT INTO assets VALUES ('clip.mp4', \(clip.st_size), \(SourceIdentity(clip).modifiedNanoseconds), 0, NULL, NULL, NULL, NULL);
                """)
        }
        let index = try LibraryIndex(library: library, databasePath: database)
        #expect(index.persisted)
        #expect(index.listing(order: .oldest, offset: 0, limit: 10).items.map(\.path.description) == ["a.jpg"])
        #expect(index.rescan().headerReads == 2)   // both decided again under revision 3
        let items = index.listing(order: .oldest, offset: 0, limit: 10).items
        let video = try #require(items.first { $0.path.description == "clip.mp4" })
        #expect(video.durationMilliseconds == 6000 && video.isVideo)
        #expect(video.width == 320 && video.height == 240)
        #expect(items.first { $0.path.description == "a.jpg" }?.durationMilliseconds == nil)
        let reopened = try LibraryIndex(library: library, databasePath: database)
        #expect(reopened.rescan().headerReads == 0)
        #expect(reopened.listing(order: .oldest, offset: 0, limit: 10).items == items)
    }
}
