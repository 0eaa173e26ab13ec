import Foundation
import Rendering
@testable import Library
import Testing
import TestSupport
@testable import ThumbServer
import ThumbHash

/// Placeholders from embedded previews (`thumbhash_previews`, issue 28): right after the first
/// scan, with no render run, each photo whose preview has its shape is listed with a `thumbhash`
/// made from it; one whose preview has another shape, or that has none, is left to the backfill.
@Suite struct ThumbhashPreviewTests {
    /// Photos with a preview of their shape: the fixture's, and the corpus' phone photos when there.
    /// `preview`: the preview, as a file `vips stats` reads (a HEIF's `[thumbnail]`; a JPEG's
    /// EXIF thumbnail is cut out by `ExifThumbnail` into `name.thumbnail.jpg`).
    static let trusted: [(name: String, source: String)] = {
        var photos = [("galaxy-s-orientation6-gps-vga.jpg", Paths.fixturePhotos + "/galaxy-s-orientation6-gps-vga.jpg")]
        if let corpus = Paths.corpus {
            photos += [("google-pixel-12mp-gps.jpg", corpus + "/photos/google-pixel-12mp-gps.jpg"),
                       ("iphone5-orientation3-gps.jpg", corpus + "/photos/iphone5-orientation3-gps.jpg"),
                       ("heic-iphone7-gps-p3.heic", corpus + "/formats/heic-iphone7-gps-p3.heic")]
        }
        return photos
    }()

    final class Photos {
        let root = NSTemporaryDirectory() + "thumbd-previews-\(UUID().uuidString)"

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
            for (name, source) in ThumbhashPreviewTests.trusted {
                try fm.copyItem(atPath: source, toPath: root + "/" + name)
            }
            // A preview of another shape (a 160x120 kept in a photo made 311x450), and none.
            for name in ["sony-cybershot-small-orientation6.jpg", "Landscape_1.jpg"] {
                try fm.copyItem(atPath: Paths.fixturePhotos + "/" + name, toPath: root + "/" + name)
            }
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// Each listed item's path to its `thumbhash` (nil: `null`) and shown size.
    func listed(_ server: ServerHarness) throws -> [String: (hash: [UInt8]?, width: Int, height: Int)] {
        var items: [String: (hash: [UInt8]?, width: Int, height: Int)] = [:]
        for item in try server.get("/assets").json["items"] as? [[String: Any]] ?? [] {
            let hash = (item["thumbhash"] as? String).flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) }
            items[item["path"] as? String ?? ""] = (hash, item["width"] as? Int ?? 0, item["height"] as? Int ?? 0)
        }
        return items
    }

    func placeholders(_ server: ServerHarness) throws -> [String: Any] {
        try server.stats()["placeholders"] as? [String: Any] ?? [:]
    }

    /// The mean of each of R, G, B over the preview of `name` (`vips stats`), 0...255.
    func previewMean(_ name: String, source: String) throws -> [Double] {
        let directory = NSTemporaryDirectory() + "thumbd-preview-mean-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var preview = source + "[thumbnail]"
        if name.hasSuffix(".jpg") {
            preview = directory + "/thumbnail.jpg"
            try Data(try ExifThumbnail.bytes(ofJPEG: source)).write(to: URL(fileURLWithPath: preview))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["vips", "stats", preview, directory + "/stats.csv"]
        try process.run()
        process.waitUntilExit()
        // Rows: all bands, then band 0, 1, 2; the fifth column is the mean.
        let rows = try String(contentsOfFile: directory + "/stats.csv", encoding: .utf8).split(separator: "\n")
        return rows[1...3].map { Double($0.split(separator: "\t")[4])! }
    }

    @Test func aPhotoWithAPreviewIsListedWithItsPlaceholderBeforeAnyRender() throws {
        let photos = try Photos()
        let server = try ServerHarness(library: photos.root) { $0.thumbhashBackfill = false }
        server.waitForInitialScan()
        // The listing answers before the previews are read (or some of them): each placeholder
        // is in it, or reaches it through the change feed as its item changed.
        let first = try server.get("/assets").json
        let generation = try #require(first["generation"] as? Int)
        let listedWithPlaceholder = Set((first["items"] as? [[String: Any]] ?? []).filter { $0["thumbhash"] is String }.compactMap { $0["path"] as? String })
        server.thumbd.service.previews.waitUntilIdle()
        server.publishPlaceholders()
        let changes = try server.get("/assets/changes?since=\(generation)").json
        let changed = Set((changes["changed"] as? [[String: Any]] ?? []).compactMap { ($0["item"] as? [String: Any])?["path"] as? String })
        #expect(listedWithPlaceholder.union(changed) == Set(Self.trusted.map(\.0)))
        #expect((changes["generation"] as? Int ?? 0) > generation || changed.isEmpty)
        let items = try listed(server)
        for (name, source) in Self.trusted {
            let item = try #require(items[name], "\(name)")
            let hash = try #require(item.hash, "\(name) has no placeholder")
            // The decoded placeholder's aspect within 10% of the photo's as listed (shown).
            let image = try #require(ThumbHash.decode(hash))
            let aspect: Double = Double(image.width) / Double(image.height), photo: Double = Double(item.width) / Double(item.height)
            let off: Double = abs(aspect / photo - 1)
            #expect(off <= 0.10, "\(name): \(image.width)x\(image.height) for \(item.width)x\(item.height)")
            // Its mean colour is the preview's. ThumbHash keeps the mean as L, P, Q in 6 bits each:
            // brightness ((R+G+B)/3, which is L) within 3 levels (a step of L is 4 levels); each
            // channel within 8 (a step of P or Q is 8 levels, up to 3 on a channel, and the
            // reference decoder boosts P and Q 1.25x; these previews are within 15 levels of
            // grey, so up to 4 more). Measured: at most 1.7 and 3.3.
            var mean = [0.0, 0.0, 0.0]
            for pixel in 0..<(image.width * image.height) {
                for band in 0..<3 { mean[band] += Double(image.rgba[pixel * 4 + band]) }
            }
            mean = mean.map { $0 / Double(image.width * image.height) }
            let expected = try previewMean(name, source: source)
            let brightness: Double = (mean[0] + mean[1] + mean[2]) / 3, expectedBrightness: Double = (expected[0] + expected[1] + expected[2]) / 3
            #expect(abs(brightness - expectedBrightness) <= 3, "\(name): \(mean) for \(expected)")
            let channels: [Double] = (0..<3).map { abs(mean[$0] - expected[$0]) }
            #expect(channels.max()! <= 8, "\(name): \(mean) for \(expected)")
        }
        let mismatched = try #require(items["sony-cybershot-small-orientation6.jpg"]), absent = try #require(items["Landscape_1.jpg"])
        #expect(mismatched.hash == nil)
        #expect(absent.hash == nil)
        let stats = try placeholders(server)
        #expect(stats["from_previews"] as? Int == Self.trusted.count)
        #expect(stats["previews_mismatched"] as? Int == 1)
        #expect(stats["known"] as? Int == Self.trusted.count)
        #expect(stats["missing"] as? Int == 2)
        // No render ran: nothing rendered, nothing cached, no backfill.
        #expect(try server.stat("renders", "total") == 0)
        #expect(try server.stat("disk_cache", "entries") == 0)
        #expect(stats["from_renders"] as? Int == 0 && stats["backfilled"] as? Int == 0)
    }

    /// With the backfill on, it renders only what the previews left: the photo whose preview has
    /// another shape and the one without.
    @Test func theBackfillMakesOnlyWhatPreviewsLeft() throws {
        let photos = try Photos()
        let server = try ServerHarness(library: photos.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        let deadline = Date().addingTimeInterval(60)
        func backfill() throws -> [String: Any] { try placeholders(server)["backfill"] as? [String: Any] ?? [:] }
        while try (backfill()["passes"] as? Int ?? 0) < 1, Date() < deadline { usleep(50_000) }
        #expect(try backfill()["renders"] as? Int == 2)
        let stats = try placeholders(server)
        #expect(stats["backfilled"] as? Int == 2)
        #expect(stats["from_previews"] as? Int == Self.trusted.count)
        server.publishPlaceholders()
        #expect(try listed(server).values.allSatisfy { $0.hash != nil })
    }

    @Test func offByConfig() throws {
        let photos = try Photos()
        let server = try ServerHarness(library: photos.root) {
            $0.thumbhashBackfill = false
            $0.thumbhashPreviews = false
        }
        server.waitForInitialScan()
        server.thumbd.service.previews.waitUntilIdle()
        #expect(try placeholders(server)["from_previews"] as? Int == 0)
        #expect(try listed(server).values.allSatisfy { $0.hash == nil })
    }

    /// A photo whose embedded preview is sound but whose picture cannot be decoded (the corpus'
    /// camera JPEG with corrupt scan data) gets the preview's placeholder at the scan; its first
    /// render answers 415, and from then its placeholder is `null` (docs/API.md: none for a file
    /// that cannot be rendered), told to an open page by the feed, and counted unrenderable.
    @Test(.enabled(if: Paths.corpus != nil, "the shared corpus"))
    func aPhotoThatCannotBeRenderedLosesItsPreviewsPlaceholder() throws {
        let root = TemporaryDirectory("thumbd-previews-corrupt")
        root.write("corrupt.jpg", Array(try Data(contentsOf: URL(fileURLWithPath: Paths.corpus! + "/broken/camera-jpeg-corrupt-scan-data.jpg"))))
        let server = try ServerHarness(library: root.path) { $0.thumbhashBackfill = false }
        server.waitForInitialScan()
        server.thumbd.service.previews.waitUntilIdle()
        server.publishPlaceholders()
        #expect(try listed(server)["corrupt.jpg"]?.hash != nil, "its preview's placeholder")
        let generation = try #require(try server.get("/assets").json["generation"] as? Int)
        #expect(try server.get("/thumbnails/3/corrupt.jpg").status == 415)
        server.publishPlaceholders()   // taken away from the listing at its publication
        #expect(try listed(server)["corrupt.jpg"]?.hash == nil)
        let changes = try server.get("/assets/changes?since=\(generation)").json
        let changed = (changes["changed"] as? [[String: Any]])?.first?["item"] as? [String: Any]
        #expect(changed?["path"] as? String == "corrupt.jpg" && changed?["thumbhash"] is NSNull)
        #expect(try placeholders(server)["unrenderable"] as? Int == 1)
        #expect(try placeholders(server)["backfill_failed"] as? Int == 0)
    }
}
