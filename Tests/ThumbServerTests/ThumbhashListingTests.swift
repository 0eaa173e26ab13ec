import Foundation
import Library
import Rendering
import Testing
import TestSupport
@testable import ThumbServer
import ThumbHash

/// `thumbhash` in `/assets` items (docs/API.md, "Listing"): null until a render makes it, the
/// ThumbHash of the first render's pixels, kept across a restart, dropped when the file changes.
@Suite struct ThumbhashListingTests {
    final class TwoPhotos {
        let root = NSTemporaryDirectory() + "thumbd-thumbhash-\(UUID().uuidString)"

        init() throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: root + "/landscape.jpg")
            try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg", toPath: root + "/kodak.jpg")
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// Each listed path's `thumbhash`, decoded from base64 (nil for JSON null).
    func thumbhashes(_ server: ServerHarness) throws -> [String: [UInt8]?] {
        let items = try server.get("/assets").json["items"] as? [[String: Any]] ?? []
        var found: [String: [UInt8]?] = [:]
        for item in items {
            let path = item["path"] as? String ?? ""
            #expect(item.keys.contains("thumbhash"), "\(path) has no thumbhash key")
            found.updateValue((item["thumbhash"] as? String).map { [UInt8](Data(base64Encoded: $0) ?? Data()) }, forKey: path)
        }
        return found
    }

    /// What the renderer's own placeholder of `name` at `grid` hashes to.
    func expectedHash(_ library: TwoPhotos, _ name: String, grid: String) throws -> [UInt8] {
        let spec = try #require(GridSpec.defaults.first { $0.name == grid })
        var request = RenderRequest(sourcePath: library.root + "/" + name, spec: spec)
        request.placeholderSide = 100
        let image = try #require(try Renderer().render(request).placeholder)
        return try ThumbHash.encode(width: image.width, height: image.height, rgba: image.rgba)
    }

    @Test func madeByTheFirstRenderKeptAcrossARestartDroppedOnChange() throws {
        let library = try TwoPhotos()
        // Renders' placeholders alone: the galaxy photo put in below has an embedded preview of
        // its shape, whose placeholder, read on the render lane, could come before the render's.
        let server = try ServerHarness(library: library.root) {
            $0.indexRescanSeconds = 3600
            $0.thumbhashBackfill = false
            $0.thumbhashPreviews = false
        }
        server.waitForInitialScan()
        #expect(try thumbhashes(server) == ["landscape.jpg": nil, "kodak.jpg": nil])

        // Grid 1 (contain, 1179x786): the whole photo, 99x66 px: L counts 7 across, 5 down.
        // Listed once published.
        #expect(try server.get("/thumbnails/1/landscape.jpg").status == 200)
        server.publishPlaceholders()
        var hashes = try thumbhashes(server)
        let landscape = try #require(hashes["landscape.jpg"] ?? nil)
        #expect(landscape == (try expectedHash(library, "landscape.jpg", grid: "1")))
        #expect((5...25).contains(landscape.count))
        #expect(ThumbHash.approximateAspectRatio(landscape) == 7.0 / 5.0)
        #expect(hashes["kodak.jpg"] == .some(nil))
        // Grid 3 (cover): the whole photo too, not the square (640x480: 88x66 px, 7 across, 5
        // down); a later render of another grid leaves the first hash.
        #expect(try server.get("/thumbnails/3/kodak.jpg").status == 200)
        #expect(try server.get("/thumbnails/5/landscape.jpg").status == 200)
        server.publishPlaceholders()
        hashes = try thumbhashes(server)
        let kodak = try #require(hashes["kodak.jpg"] ?? nil)
        #expect(kodak == (try expectedHash(library, "kodak.jpg", grid: "3")))
        #expect(ThumbHash.approximateAspectRatio(kodak) == 7.0 / 5.0)
        #expect(hashes["landscape.jpg"] == .some(landscape))
        let placeholders = try server.stats()["placeholders"] as? [String: Any] ?? [:]
        #expect(placeholders["from_renders"] as? Int == 2)
        #expect(placeholders["known"] as? Int == 2)
        // Each step of making them took some time, and none took seconds.
        for step in ["shrink_ms_mean", "encode_ms_mean", "store_ms_mean"] {
            let ms = try #require(placeholders[step] as? Double, "\(step) missing")
            #expect(ms > 0 && ms < 1000, "\(step) \(ms)")
        }

        try server.restart()
        server.waitForInitialScan()
        #expect(try thumbhashes(server) == ["landscape.jpg": landscape, "kodak.jpg": kodak])

        // Replaced by another photo: the listing drops the old placeholder at the scan that
        // sees the change, and the next render makes the new one.
        try FileManager.default.removeItem(atPath: library.root + "/kodak.jpg")
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/galaxy-s-orientation6-gps-vga.jpg",
                                         toPath: library.root + "/kodak.jpg")
        server.thumbd.service.index.rescan()
        #expect(try thumbhashes(server) == ["landscape.jpg": landscape, "kodak.jpg": nil])
        #expect(try server.get("/thumbnails/5/kodak.jpg").status == 200)
        server.publishPlaceholders()
        let galaxy = try #require(try thumbhashes(server)["kodak.jpg"] ?? nil)
        #expect(galaxy == (try expectedHash(library, "kodak.jpg", grid: "5")))
        #expect(galaxy != kodak)
    }

    /// `GET /assets` at a generation carries the placeholders published at or before it, never
    /// one only the next generation tells (docs/API.md, "Placeholders"): a render's, and its
    /// taking away by a 403 (`Placeholders.forget`, what a render or a URL's resolving calls on
    /// EACCES; these tests run as root, who reads any file: `UnprivilegedWatchTests` makes a real
    /// 403). The server publishes 50 ms after an arrival on its own, so a listing in between is
    /// of either generation, never of one with the other's placeholder; then the test publishes.
    @Test func aListingCarriesThePlaceholdersOfItsOwnGeneration() throws {
        let library = try TwoPhotos()
        let server = try InProcessServer(library: library.root) { $0.makeNoPlaceholders() }
        #expect(eventually { server.thumbd.service.index.isComplete })
        func json(_ target: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(server.respond("GET", target).body)) as? [String: Any])
        }
        /// The listing's generation and landscape.jpg's `thumbhash` in it.
        func landscape() throws -> (generation: Int, thumbhash: String?) {
            let listing = try json("/assets")
            let item = try #require((listing["items"] as? [[String: Any]])?.first { $0["path"] as? String == "landscape.jpg" })
            return (try #require(listing["generation"] as? Int), item["thumbhash"] as? String)
        }
        /// The feed's changed items since `generation`: path and `thumbhash` (nil for null).
        func changed(since generation: Int) throws -> [String: String?] {
            let entries = try json("/assets/changes?since=\(generation)")["changed"] as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: try entries.map { entry in
                let item = try #require(entry["item"] as? [String: Any])
                return (try #require(item["path"] as? String), item["thumbhash"] as? String)
            })
        }
        let made = Data(try expectedHash(library, "landscape.jpg", grid: "1")).base64EncodedString()
        let start = try landscape()
        #expect(start.thumbhash == nil)

        #expect(server.respond("GET", "/thumbnails/1/landscape.jpg").status == 200)
        let rendered = try landscape()
        #expect(rendered == (start.generation, String?.none) || rendered == (start.generation + 1, made), "\(rendered)")
        server.publishPlaceholders()
        #expect(try landscape() == (start.generation + 1, made))
        #expect(try changed(since: start.generation) == ["landscape.jpg": made])

        server.thumbd.service.pipeline.placeholders.forget(DiskPath("landscape.jpg"))
        let forgotten = try landscape()
        #expect(forgotten == (start.generation + 1, made) || forgotten == (start.generation + 2, String?.none), "\(forgotten)")
        server.publishPlaceholders()
        #expect(try landscape() == (start.generation + 2, String?.none))
        #expect(try changed(since: start.generation + 1) == ["landscape.jpg": String?.none])
    }
}
