import Foundation
import Rendering
import Testing
@testable import ThumbServer
import ThumbHash

/// The placeholder backfill (`thumbhash_backfill`): every listed image gets its `thumbhash`
/// without a client asking; an unchanged library is backfilled once, and a restart redoes
/// nothing, not even the files that cannot be rendered.
@Suite struct ThumbhashBackfillTests {
    final class Photos {
        let root = NSTemporaryDirectory() + "thumbd-backfill-\(UUID().uuidString)"

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
            for name in ["Landscape_1.jpg", "kodak-dc210-1998-vga.jpg", "sony-cybershot-small-orientation6.jpg"] {
                try fm.copyItem(atPath: Paths.fixturePhotos + "/" + name, toPath: root + "/" + name)
            }
            // Its header reads (so it is listed), its pixels do not (a PNG cut in half: 415 at
            // render; a JPEG cut short would render what decodes, docs/API.md "Thumbnails").
            let image = try Data(contentsOf: URL(fileURLWithPath: Paths.packageRoot + "/Tests/Fixtures/formats/png-rgba-alpha-2048x1536.png"))
            try image.prefix(image.count / 2).write(to: URL(fileURLWithPath: root + "/truncated.png"))
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    func placeholders(_ server: ServerHarness) throws -> [String: Any] {
        try server.stats()["placeholders"] as? [String: Any] ?? [:]
    }

    func backfill(_ server: ServerHarness) throws -> [String: Any] {
        try placeholders(server)["backfill"] as? [String: Any] ?? [:]
    }

    /// Waits until a backfill pass has finished since the server started, and publishes what it
    /// made (the listing carries a placeholder from its publication on).
    func waitForPass(_ server: ServerHarness) throws {
        let deadline = Date().addingTimeInterval(60)
        while try (backfill(server)["passes"] as? Int ?? 0) < 1, Date() < deadline { usleep(50_000) }
        #expect(try backfill(server)["passes"] as? Int == 1)
        server.publishPlaceholders()
    }

    func listed(_ server: ServerHarness) throws -> [String: String] {
        var hashes: [String: String] = [:]
        for item in try server.get("/assets").json["items"] as? [[String: Any]] ?? [] {
            hashes[item["path"] as? String ?? ""] = item["thumbhash"] as? String ?? "null"
        }
        return hashes
    }

    @Test func backfillsOnceAndARestartRedoesNothing() throws {
        let photos = try Photos()
        let server = try ServerHarness(library: photos.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        try waitForPass(server)
        let hashes = try listed(server)
        #expect(hashes["truncated.png"] == "null")
        // Each whole photo, upright, in 100x100 (issue 28: not the centre square of grid 5).
        for (name, size) in [("Landscape_1.jpg", (100, 67)), ("kodak-dc210-1998-vga.jpg", (100, 75)),
                             ("sony-cybershot-small-orientation6.jpg", (100, 69))] {   // 1800x1200, 640x480, 450x311 shown
            var request = RenderRequest(sourcePath: photos.root + "/" + name,
                                        spec: GridSpec(name: "t", width: 100, height: 100, fit: .contain), format: .jpeg)
            request.placeholderSide = 100
            let image = try #require(try Renderer().render(request).placeholder)
            #expect((image.width, image.height) == size, "\(name)")
            let expected = try ThumbHash.encode(width: image.width, height: image.height, rgba: image.rgba)
            #expect(hashes[name] == Data(expected).base64EncodedString(), "\(name)")
        }
        var stats = try placeholders(server)
        #expect(stats["known"] as? Int == 3)
        #expect(stats["unrenderable"] as? Int == 1)
        #expect(stats["missing"] as? Int == 0)
        #expect(stats["backfilled"] as? Int == 3)
        #expect(stats["from_renders"] as? Int == 0)
        #expect(try backfill(server)["renders"] as? Int == 4)
        // Backfill renders are not thumbnails: nothing was cached, no client render counted.
        #expect(try server.stat("renders", "total") == 0)
        #expect(try server.stat("disk_cache", "entries") == 0)
        // Rested, it does not go again over an unchanged library.
        usleep(2_500_000)
        #expect(try backfill(server)["passes"] as? Int == 1)
        #expect(try backfill(server)["renders"] as? Int == 4)

        try server.restart()
        server.waitForInitialScan()
        try waitForPass(server)
        #expect(try listed(server) == hashes)
        #expect(try backfill(server)["renders"] as? Int == 0)
        stats = try placeholders(server)
        #expect(stats["known"] as? Int == 3 && stats["unrenderable"] as? Int == 1)

        // A new photo changes the listing: the next pass makes its placeholder alone.
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_6.jpg", toPath: photos.root + "/new.jpg")
        server.thumbd.service.index.rescan()
        let deadline = Date().addingTimeInterval(60)
        while try (backfill(server)["passes"] as? Int ?? 0) < 2, Date() < deadline { usleep(50_000) }
        #expect(try backfill(server)["renders"] as? Int == 1)
        server.publishPlaceholders()
        #expect(try listed(server)["new.jpg"] != "null")
    }

    @Test func offByConfig() throws {
        let photos = try Photos()
        let server = try ServerHarness(library: photos.root) { $0.thumbhashBackfill = false }
        server.waitForInitialScan()
        usleep(2_500_000)   // past the backfill's first look (2 s)
        #expect(try backfill(server)["enabled"] as? Bool == false)
        #expect(try backfill(server)["renders"] as? Int == 0)
        #expect(try placeholders(server)["missing"] as? Int == 4)
    }
}
