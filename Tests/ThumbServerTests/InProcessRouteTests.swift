import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Rendering
import Testing
import TestSupport
@testable import ThumbServer
@testable import Thumbnails

/// The routes driven directly through `ThumbService.respond`, with no socket: the same contract
/// as the socket tests, one layer down.
@Suite struct InProcessRouteTests {
    final class Service: InProcessServer, @unchecked Sendable {
        init(memoryCacheBytes: Int = Config().memoryCacheBytes, adminToken: String = "",
             configure: (inout Config) -> Void = { _ in }) throws {
            try super.init { config in
                config.memoryCacheBytes = memoryCacheBytes
                config.adminToken = adminToken
                configure(&config)
            }
        }

        /// `respond` with a text body.
        func respond(_ method: String, _ target: String, headers: [(String, String)] = [], body: String) -> HTTPResponse {
            respond(method, target, headers: headers, body: Array(body.utf8))
        }
    }

    @Test func aMissThenAMemoryHitWithTheSameBytes() throws {
        let service = try Service()
        let miss = service.respond("GET", "/thumbnails/3/galaxy-s-orientation6-gps-vga.jpg")
        #expect(miss.status == 200)
        #expect(miss.headers["X-Cache"] == "MISS")
        #expect(ImageHeader(miss.body) == ImageHeader(format: "jpeg", width: 393, height: 393))
        let hit = service.respond("GET", "/thumbnails/3/galaxy-s-orientation6-gps-vga.jpg")
        #expect(hit.headers["X-Cache"] == "HIT-MEMORY")
        #expect(hit.body == miss.body)
        #expect(hit.headers["ETag"] == miss.headers["ETag"])
        let etag = try #require(hit.headers["ETag"])
        let notModified = service.respond("GET", "/thumbnails/3/galaxy-s-orientation6-gps-vga.jpg",
                                          headers: [("If-None-Match", String(etag.dropFirst(2)))])   // the strong spelling
        #expect(notModified.status == 304)
        #expect(notModified.body.isEmpty)
    }

    /// Hits carry headers prepared once per URL, tier and format: each tier and each format
    /// still says its own `X-Cache` and `Content-Type`, in one process.
    @Test func hitsFromEachTierAndFormatCarryTheirOwnHeaders() throws {
        let limit = 4 << 20
        let service = try Service(memoryCacheBytes: limit)
        let target = "/thumbnails/3/galaxy-s-orientation6-gps-vga.jpg"
        let miss = service.respond("GET", target)
        let etag = try #require(miss.headers["ETag"])
        #expect(miss.headers["X-Cache"] == "MISS")
        #expect(service.respond("GET", target).headers["X-Cache"] == "HIT-MEMORY")
        try waitForFile(service.cache + "/entries/\(etag.dropFirst().prefix(2))/\(etag.dropFirst().dropLast())")
        // Push it out of memory with fillers of a tenth of the limit each (the most one entry may be).
        let memory = service.thumbd.service.pipeline.memory
        for i in 0..<11 {
            memory.insert(Thumbnail(bytes: Array(repeating: 0, count: limit / 10), format: .jpeg, width: 1, height: 1),
                          for: "filler-\(i)")
        }
        for expected in ["HIT-DISK", "HIT-MEMORY", "HIT-MEMORY"] {
            let hit = service.respond("GET", target)
            #expect(hit.headers["X-Cache"] == expected)
            #expect(hit.headers["ETag"] == etag)
            #expect(hit.headers["Content-Type"] == "image/jpeg")
            #expect(hit.body == miss.body)
        }
        let png = service.respond("GET", target + "?format=png")
        #expect(png.headers["X-Cache"] == "MISS")
        let pngHit = service.respond("GET", target + "?format=png")
        #expect(pngHit.headers["X-Cache"] == "HIT-MEMORY")
        #expect(pngHit.headers["Content-Type"] == "image/png")
        #expect(pngHit.headers["ETag"] == png.headers["ETag"] && pngHit.headers["ETag"] != etag)
        #expect(ImageHeader(pngHit.body) == ImageHeader(format: "png", width: 393, height: 393))
        #expect(service.respond("GET", target).headers["Content-Type"] == "image/jpeg")
    }

    /// Every route with every method, with and without an admin token: what each answers, and
    /// the `Allow` of each 405 (README, "URLs"). An admin route refuses a request without the
    /// token (401) before it looks at the method; a malformed job id is 404 whatever the method.
    @Test(arguments: [false, true])
    func everyRouteAnswersEachMethodAsDeclared(withToken: Bool) throws {
        let service = try Service(adminToken: withToken ? "s3cret" : "")
        let get = "GET, HEAD, OPTIONS", jobs = "POST, DELETE, OPTIONS", job = "GET, HEAD, DELETE, OPTIONS"
        let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]
        /// Per target: the status of each method in `methods` order (0: 200 or 503, the index
        /// may still be in its first scan), and the `Allow` of its 405s.
        let readable = [200, 200, 405, 405, 405, 405], nothing = [404, 404, 404, 404, 404, 404]
        var expected: [(String, [Int], String?)] = [
            ("/thumbnails/3/Landscape_1.jpg", readable, get), ("/", readable, get),
            ("/assets", [0, 0, 405, 405, 405, 405], get), ("/healthz", readable, get),
            ("/stats", readable, get), ("/metrics", readable, get),
            ("/prefetch", [405, 405, 400, 405, 200, 405], jobs),   // POST: an empty body is 400
            ("/prefetch/1", [404, 404, 405, 405, 404, 405], job),
        ] + ["/prefetch/abc", "/prefetch/0", "/prefetch/", "/thumbnails", "/assets/", "/elsewhere"].map { ($0, nothing, nil) }
        if withToken {
            let admin = [401, 401, 401, 401, 401, 401]
            for (i, (target, statuses, allow)) in expected.enumerated() {
                switch target {
                case "/stats", "/metrics": expected[i] = (target, admin, nil)
                case _ where target.hasPrefix("/prefetch"):   // reading a job stays open
                    expected[i] = (target, Array(statuses.prefix(2)) + admin.dropFirst(2), allow)
                default: break
                }
            }
        }
        for (target, statuses, allow) in expected {
            for (method, status) in zip(methods, statuses) {
                let response = service.respond(method, target)
                if status == 0 {
                    #expect(response.status == 200 || response.status == 503, "\(method) \(target)")
                } else {
                    #expect(response.status == status, "\(method) \(target)")
                }
                #expect(response.headers["Allow"] == (response.status == 405 ? allow : nil), "\(method) \(target)")
                #expect((response.headers["WWW-Authenticate"] != nil) == (response.status == 401), "\(method) \(target)")
            }
        }
    }

    @Test func errorsAreJSONWithTheirStatus() throws {
        let service = try Service()
        for (method, target, status, code) in [("GET", "/thumbnails/7/Landscape_1.jpg", 404, "not_found"),
                                               ("GET", "/thumbnails/3/%2e%2e/broken/empty.jpg", 404, "not_found"),
                                               ("GET", "/thumbnails/3/%zz.jpg", 400, "bad_request"),
                                               ("PATCH", "/thumbnails/3/Landscape_1.jpg", 405, "method_not_allowed"),
                                               ("GET", "/elsewhere", 404, "not_found"),
                                               ("GET", "/%", 400, "bad_request"), ("GET", "/a%4", 400, "bad_request"),
                                               ("GET", "/%41ssets", 404, "not_found")] {
            let response = service.respond(method, target)
            #expect(response.status == status, "\(method) \(target)")
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.headers["Cache-Control"] == "no-store")
            let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(json?["error"] as? String == code)
        }
    }

    /// A decode failure is a fact about the file: remembered against its identity (device,
    /// inode, size, mtime) so a second request does not decode it again, and forgotten the
    /// moment the file changes. Never cached as a thumbnail.
    @Test func anUndecodableSourceIs415AndRememberedUntilItChanges() throws {
        let library = NSTemporaryDirectory() + "thumbd-inprocess-lib-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let cache = library + "-cache"
        defer { for dir in [library, cache] { try? FileManager.default.removeItem(atPath: dir) } }
        let fake = library + "/fake.jpg"
        try Data("<html>not a photo</html>".utf8).write(to: URL(fileURLWithPath: fake))
        var config = Config()
        config.library = library
        config.cacheDirectory = cache
        config.libraryWatch = false
        let thumbd = try Thumbd(config: config, process: ProcessSetup.prepare())
        thumbd.startServing()
        defer { thumbd.service.pipeline.stop() }
        func get(_ target: String) -> HTTPResponse {
            let done = DispatchSemaphore(value: 0)
            let box = LockedArray<HTTPResponse>()
            thumbd.service.respond(to: HTTPRequest(method: "GET", target: target)) { box.append($0.withFileRead); done.signal() }
            done.wait()
            return box.values[0]
        }
        let statistics = { thumbd.service.pipeline.statistics.renders }
        for grid in ["5", "5", "3", "1"] {
            let response = get("/thumbnails/\(grid)/fake.jpg")
            #expect(response.status == 415)
            #expect(response.headers["ETag"] == nil)
        }
        #expect(statistics().failed == 1)          // decoded once, for every grid
        #expect(statistics().knownFailures == 3)
        #expect(thumbd.service.pipeline.statistics.disk.entries == 0)

        // Rewritten (another size, another mtime): tried again.
        try Data("<html>still not a photo, longer</html>".utf8).write(to: URL(fileURLWithPath: fake))
        #expect(get("/thumbnails/5/fake.jpg").status == 415)
        #expect(statistics().failed == 2)
        // Replaced by a photo: served.
        try FileManager.default.removeItem(atPath: fake)
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/Landscape_1.jpg", toPath: fake)
        #expect(get("/thumbnails/5/fake.jpg").status == 200)
    }
}
