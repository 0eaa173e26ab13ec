import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// A JPEG cut short (a copy still under way, a card pulled out) answers 200 with what decodes and
/// is counted in `renders.degraded`; one cut inside its header is still 415 (issue 31, item 8;
/// docs/API.md "Thumbnails").
@Suite struct DegradedSourceTests {
    /// `Landscape_1.jpg`: 1800x1200, orientation 1, 347,327 bytes.
    static let photo = Paths.fixturePhotos + "/Landscape_1.jpg"

    @Test func aCutJPEGIs200CountedCachedAndRenderedAnewOnceComplete() throws {
        let library = TemporaryDirectory("thumbd-degraded")
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.photo)))
        library.write("cut.jpg", Array(whole.prefix(208_396)))   // 60%
        library.write("header-only.jpg", Array(whole.prefix(400)))   // the SOS marker is at byte 482
        let server = try ServerHarness(library: library.path) {
            $0.thumbhashBackfill = false   // only the requests below render
            $0.libraryWatch = true         // the listing follows the file being completed
        }
        server.waitForInitialScan()

        let first = try server.get("/thumbnails/1/cut.jpg")
        #expect(first.status == 200, "\(first.text)")
        // 1800x1200 in 1179x2358: width limits, 1200 * 1179 / 1800 = 786.
        #expect(first.image == ImageHeader(format: "jpeg", width: 1179, height: 786))
        #expect(first.header("X-Cache") == "MISS")
        #expect(first.header("Cache-Control") == "public, no-cache")   // a bare URL, as any other
        #expect(try server.stat("renders", "degraded") == 1)
        #expect(try server.stat("renders", "failed") == 0)
        #expect(try server.get("/metrics").text.contains("\nthumbd_renders_degraded_total 1\n"))

        // Listed with the header's size; its placeholder came from that render (listed once
        // published); its versioned URL is a year's, like any other (its `v` names this size and mtime).
        server.publishPlaceholders()
        let items = try server.get("/assets").json["items"] as? [[String: Any]] ?? []
        let item = try #require(items.first { $0["path"] as? String == "cut.jpg" })
        #expect((item["width"] as? Int, item["height"] as? Int) == (1800, 1200))
        #expect(item["thumbhash"] is String)
        let versioned = try #require((item["thumbnails"] as? [String: String])?["1"])
        let hit = try server.get(versioned)
        #expect(hit.header("X-Cache") == "HIT-MEMORY")
        #expect(hit.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(hit.header("ETag") == first.header("ETag"))
        #expect(try server.stat("renders", "degraded") == 1)   // a hit is not a render

        let headerOnly = try server.get("/thumbnails/1/header-only.jpg")
        #expect(headerOnly.status == 415)
        #expect(headerOnly.json["error"] as? String == "unsupported_source")

        // The copy completes: another size and mtime, so another key, and a whole render.
        library.write("cut.jpg", whole)
        let deadline = Date().addingTimeInterval(10)
        var complete = try server.get("/thumbnails/1/cut.jpg")
        while complete.header("ETag") == first.header("ETag") && Date() < deadline {
            usleep(20_000)
            complete = try server.get("/thumbnails/1/cut.jpg")
        }
        #expect(complete.status == 200)
        #expect(complete.header("X-Cache") == "MISS")
        #expect(complete.header("ETag") != first.header("ETag"))
        #expect(try server.stat("renders", "degraded") == 1)
        #expect(try server.stat("renders", "total") == 3)   // cut, header-only (failed), complete
    }
}
