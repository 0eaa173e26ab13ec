import Foundation
import Rendering
import Testing
import Thumbnails
@testable import ThumbServer

/// Hostile and unusual paths, methods and routes (docs/API.md, "Thumbnails" and "Errors").
@Suite struct PathAndErrorTests {
    /// A library with tricky names beside a secret outside it.
    final class Fixture {
        let root = NSTemporaryDirectory() + "thumbd-paths-\(UUID().uuidString)"
        var library: String { root + "/library" }
        let names = ["photo with spaces.jpg", "#1 photo.jpg", "100% zoom.jpg", "1+1=2.jpg", "why?.jpg", "a%20b.jpg",
                     "서울 야경.jpg", "deep/er/nested.jpg"]

        init() throws {
            let fm = FileManager.default
            try fm.createDirectory(atPath: library + "/deep/er", withIntermediateDirectories: true)
            let photo = Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg"
            for name in names { try fm.copyItem(atPath: photo, toPath: library + "/" + name) }
            try fm.copyItem(atPath: photo, toPath: library + "/.hidden.jpg")
            try fm.copyItem(atPath: photo, toPath: root + "/secret.jpg")
            try fm.createSymbolicLink(atPath: library + "/escape.jpg", withDestinationPath: root + "/secret.jpg")
            try fm.createSymbolicLink(atPath: library + "/escape-dir", withDestinationPath: root)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    @Test func trickyNamesAreReachableWhenEncoded() throws {
        let fixture = try Fixture()
        let server = try ServerHarness(library: fixture.library)
        for name in fixture.names {
            let response = try server.get("/thumbnails/5/\(encodePath(name))")
            #expect(response.status == 200, "\(name) → \(encodePath(name)): \(response.text)")
        }
        // `+` is a plus sign, `%2B` too; `%2520` is the name "a%20b.jpg".
        #expect(try server.get("/thumbnails/5/1+1=2.jpg").status == 200)
        #expect(try server.get("/thumbnails/5/1%2B1%3D2.jpg").status == 200)
        #expect(try server.get("/thumbnails/5/a%2520b.jpg").status == 200)
        #expect(try server.get("/thumbnails/5/a%20b.jpg").status == 404)  // "a b.jpg" does not exist
    }

    @Test func nfcAndNfdRequestsShareOneCacheEntry() throws {
        let fixture = try Fixture()
        let server = try ServerHarness(library: fixture.library)
        let nfc = encodePath("서울 야경.jpg".precomposedStringWithCanonicalMapping)
        let nfd = encodePath("서울 야경.jpg".decomposedStringWithCanonicalMapping)
        #expect(nfc != nfd)
        let first = try server.get("/thumbnails/3/\(nfd)")   // the disk has NFC; asked in NFD
        let second = try server.get("/thumbnails/3/\(nfc)")
        #expect(first.status == 200)
        #expect(second.header("X-Cache") == "HIT-MEMORY")
        #expect(first.header("ETag") == second.header("ETag"))
    }

    @Test(arguments: ["/thumbnails/3/../secret.jpg", "/thumbnails/3/%2e%2e/secret.jpg", "/thumbnails/3/%2E%2E/secret.jpg",
                      "/thumbnails/3/deep/../../secret.jpg", "/thumbnails/3//etc/passwd", "/thumbnails/3/%2Fetc%2Fpasswd",
                      "/thumbnails/3/escape.jpg", "/thumbnails/3/escape-dir/secret.jpg", "/thumbnails/3/.hidden.jpg",
                      "/thumbnails/3/deep", "/thumbnails/3/", "/thumbnails/3/missing.jpg", "/thumbnails/9/deep/er/nested.jpg",
                      "/thumbnails/", "/nothing-here"])
    func whatIsOutsideOrMissingIs404(target: String) throws {
        let fixture = try Fixture()
        let server = try ServerHarness(library: fixture.library)
        let response = try server.get(target)
        #expect(response.status == 404, "\(target)")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("ETag") == nil)
        #expect(response.json["error"] as? String == "not_found")
        #expect(try server.get("/thumbnails/5/deep/er/nested.jpg").status == 200)  // and the next request is served
    }

    /// Dot-files are judged by the path a symlink resolves to, not by the link's own name: a
    /// link to a dot-file or into a dot-directory inside the library is neither served nor
    /// listed, while a link to an ordinary file still is (both were served and listed before).
    @Test func aSymlinkToADotFileIsNeitherServedNorListed() throws {
        let root = NSTemporaryDirectory() + "thumbd-dotlinks-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/.trash", withIntermediateDirectories: true)
        let photo = Paths.fixturePhotos + "/kodak-dc210-1998-vga.jpg"
        for name in ["photo.jpg", ".hidden.jpg", ".trash/old.jpg"] { try fm.copyItem(atPath: photo, toPath: root + "/" + name) }
        for (link, target) in [("peek.jpg", ".hidden.jpg"), ("restore.jpg", ".trash/old.jpg"), ("trash", ".trash"),
                               ("alias.jpg", "photo.jpg")] {
            try fm.createSymbolicLink(atPath: root + "/" + link, withDestinationPath: target)
        }
        let server = try ServerHarness(library: root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        for target in ["peek.jpg", "restore.jpg", "trash/old.jpg"] {
            let response = try server.get("/thumbnails/3/" + target)
            #expect(response.status == 404, "\(target)")
            #expect(response.json["error"] as? String == "not_found", "\(target)")
        }
        #expect(try server.get("/thumbnails/3/alias.jpg").status == 200)
        let items = try server.get("/assets?sort=oldest").json["items"] as? [[String: Any]] ?? []
        #expect(items.compactMap { $0["path"] as? String }.sorted() == ["alias.jpg", "photo.jpg"])
    }

    @Test(arguments: ["/thumbnails/3/bad%zzescape.jpg", "/thumbnails/3/trailing%2", "/thumbnails/3/%ff%fe.jpg",
                      "/thumbnails/3/nul%00.jpg"])
    func malformedPathsAre400(target: String) throws {
        let fixture = try Fixture()
        let server = try ServerHarness(library: fixture.library)
        let response = try server.get(target)
        #expect(response.status == 400, "\(target)")
        #expect(response.json["error"] as? String == "bad_request")
        #expect(response.json["message"] is String)
    }

    /// Each render failure kind, a full queue and a timeout: one status and code each (docs/API.md,
    /// "Thumbnails"), from the mapping the route uses.
    @Test(arguments: [(ThumbnailError.render(RenderError(kind: .sourceNotFound, message: "")), 404, "not_found"),
                      (.render(RenderError(kind: .unsupportedSource, message: "")), 415, "unsupported_source"),
                      (.render(RenderError(kind: .sourceTooLarge, message: "")), 422, "source_too_large"),
                      (.render(RenderError(kind: .internalFailure, message: "")), 500, "internal_error"),
                      (.render(RenderError(kind: .sourceUnreadable, message: "")), 403, "forbidden"),
                      (.render(RenderError(kind: .sourceChanged, message: "")), 503, "source_changed"),
                      (.render(RenderError(kind: .outOfDescriptors, message: "")), 503, "out_of_descriptors"),
                      (.overloaded, 503, "overloaded"), (.deadlineExceeded, 503, "render_timeout")])
    func everyPipelineErrorHasOneStatus(error: ThumbnailError, status: Int, code: String) {
        let api = ThumbService.apiError(for: error)
        #expect(api.status == status && api.code == code, "\(error)")
        #expect((api.headers["Retry-After"] != nil) == (status == 503), "\(error)")
    }

    @Test func wrongMethodsAre405WithAllow() throws {
        let server = try ServerHarness()
        for (method, target) in [("POST", "/thumbnails/3/Landscape_1.jpg"), ("DELETE", "/thumbnails/3/Landscape_1.jpg"),
                                 ("PUT", "/stats"), ("POST", "/healthz")] {
            let response = try server.get(target, method: method)
            #expect(response.status == 405, "\(method) \(target)")
            #expect(response.header("Allow") == "GET, HEAD, OPTIONS")
            #expect(response.json["error"] as? String == "method_not_allowed")
        }
    }

    @Test func healthzAndStatsAnswer() throws {
        let server = try ServerHarness()
        let health = try server.get("/healthz")
        #expect(health.status == 200)
        #expect(health.json["status"] as? String == "ok")
        let stats = try server.stats()
        for section in ["requests", "memory_cache", "disk_cache", "renders", "prefetch", "connections"] {
            #expect(stats[section] is [String: Any], "missing \(section)")
        }
        #expect((stats["memory_cache"] as? [String: Any])?["limit_bytes"] as? Int == 256 << 20)
        #expect((stats["disk_cache"] as? [String: Any])?["limit_bytes"] as? Int == 2 << 30)
        #expect(stats["uptime_seconds"] is Double || stats["uptime_seconds"] is Int)
    }

    @Test func theRootPageIsABrowserGalleryOfTheLibrary() throws {
        let server = try ServerHarness()
        let page = try server.get("/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Cache-Control") == "no-store")
        // Paged through the listing as the scroll needs it, showing the versioned URLs it gives.
        #expect(page.text.contains("'/assets?sort=' + token.sort + '&offset=' + n * PAGE_SIZE + '&limit=' + PAGE_SIZE"))
        #expect(page.text.contains("cell.url = item.thumbnails[gridName()];"))
        #expect(!page.text.contains("limit=10000"))
        // The preheat's range prefetch, its stops, and the stats panel.
        #expect(page.text.contains("JSON.stringify({grid: gridName(), sort: grid.sort, start, end, focus: job.focus})"))
        #expect(page.text.contains("fetch('/prefetch/' + job.id, {method: 'DELETE'"))
        #expect(page.text.contains("fetch('/prefetch', {method: 'DELETE'"))
        #expect(page.text.contains("fetch('/stats'"))
    }

    @Test func theGalleryNeedsNothingFromElsewhere() throws {
        let page = try ServerHarness().get("/").text
        for external in ["http://", "https://", "src=\"//", "href=\"//", "@import", "url("] {
            #expect(!page.contains(external), "the page loads \(external)")
        }
        #expect(!page.contains("<script src"))
        #expect(!page.contains("<link rel=\"stylesheet\""))
        #expect(page.hasSuffix("</html>\n"))
    }

    @Test func aFifoIsRefusedAtOnce() throws {
        let fixture = try Fixture()
        mkfifo(fixture.library + "/pipe.jpg", 0o644)
        let server = try ServerHarness(library: fixture.library)
        let response = try server.get("/thumbnails/3/pipe.jpg")
        #expect(response.status == 415)
        #expect(try server.get("/healthz").status == 200)
    }
}
