import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Rendering
import Testing
@testable import ThumbServer

/// The routes driven directly through `ThumbService.respond`, with no socket: the same contract
/// as the socket tests, one layer down.
@Suite struct InProcessRouteTests {
    final class Service {
        let cache = NSTemporaryDirectory() + "thumbd-inprocess-\(UUID().uuidString)"
        let thumbd: Thumbd

        init(memoryCacheBytes: Int = Config().memoryCacheBytes) throws {
            var config = Config()
            config.library = Paths.fixturePhotos
            config.cacheDirectory = cache
            config.memoryCacheBytes = memoryCacheBytes
            thumbd = try Thumbd(config: config)   // not started: no socket is bound
        }

        deinit {
            thumbd.service.pipeline.scheduler.stop()
            try? FileManager.default.removeItem(atPath: cache)
        }

        /// Sends one request through the router and waits for its response.
        func respond(_ method: String, _ target: String, headers: [(String, String)] = []) -> HTTPResponse {
            let done = DispatchSemaphore(value: 0)
            let box = LockedArray<HTTPResponse>()
            thumbd.service.respond(to: HTTPRequest(method: method, target: target, headers: HTTPHeaders(headers))) {
                box.append($0)
                done.signal()
            }
            done.wait()
            return box.values[0]
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
                                          headers: [("If-None-Match", "W/\(etag)")])
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

    /// A source replaced between the request's resolution and its render (here: while the only
    /// render worker is held) is never stored under the old key: the request starts over from
    /// the path and gets the new file's thumbnail, and the old version, put back with its old
    /// size and mtime, gets its own thumbnail again (found by a fresh-eyes session: it used to
    /// get the other file's, from memory and then from disk for good).
    @Test func aSourceReplacedBeforeItsRenderIsNotStoredUnderTheOldKey() throws {
        let library = NSTemporaryDirectory() + "thumbd-swap-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: library, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: library) }
        let photoA = Paths.fixturePhotos + "/Landscape_1.jpg", photoB = Paths.fixturePhotos + "/galaxy-s-orientation6-gps-vga.jpg"
        try fm.copyItem(atPath: photoA, toPath: library + "/p.jpg")
        #expect(link(library + "/p.jpg", library + "/.a-kept") == 0)   // A's inode, size and mtime
        var config = Config()
        config.library = library
        config.cacheDirectory = library + "/.cache"
        config.renderWorkers = 1
        let thumbd = try Thumbd(config: config)
        let service = thumbd.service
        defer { service.pipeline.scheduler.stop() }
        func get(_ target: String) -> HTTPResponse {
            let done = DispatchSemaphore(value: 0)
            let box = LockedArray<HTTPResponse>()
            service.respond(to: HTTPRequest(method: "GET", target: target)) { box.append($0); done.signal() }
            done.wait()
            return box.values[0]
        }
        // References: each file's thumbnail, rendered under names of their own.
        try fm.copyItem(atPath: photoA, toPath: library + "/a.jpg")
        try fm.copyItem(atPath: photoB, toPath: library + "/b.jpg")
        let thumbA = get("/thumbnails/3/a.jpg").body, thumbB = get("/thumbnails/3/b.jpg").body
        let distinct = !thumbA.isEmpty && !thumbB.isEmpty && thumbA != thumbB
        #expect(distinct)

        let gate = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0)
        #expect(service.pipeline.scheduler.enqueue(.foreground) { held.signal(); gate.wait() })
        held.wait()
        let responses = LockedArray<HTTPResponse>()
        let answered = DispatchSemaphore(value: 0)
        service.respond(to: HTTPRequest(method: "GET", target: "/thumbnails/3/p.jpg")) {
            responses.append($0)
            answered.signal()
        }
        // Resolved to A and queued behind the gate; now B takes A's place.
        try fm.copyItem(atPath: photoB, toPath: library + "/.new")
        #expect(rename(library + "/.new", library + "/p.jpg") == 0)
        gate.signal()
        answered.wait()
        let swapped = responses.values[0]
        #expect(swapped.status == 200)
        let swappedIsB = swapped.body == thumbB   // (not in #expect: a failure would print every byte)
        #expect(swappedIsB)

        #expect(rename(library + "/.a-kept", library + "/p.jpg") == 0)   // A back, same identity
        let back = get("/thumbnails/3/p.jpg")
        #expect(back.status == 200)
        let backIsA = back.body == thumbA
        #expect(backIsA)
        #expect(back.headers["ETag"] != swapped.headers["ETag"])
        #expect(service.pipeline.renderStatistics.snapshot.failed == 1)   // the render under A's key
    }

    @Test func errorsAreJSONWithTheirStatus() throws {
        let service = try Service()
        for (method, target, status, code) in [("GET", "/thumbnails/7/Landscape_1.jpg", 404, "not_found"),
                                               ("GET", "/thumbnails/3/%2e%2e/broken/empty.jpg", 404, "not_found"),
                                               ("GET", "/thumbnails/3/%zz.jpg", 400, "bad_request"),
                                               ("PATCH", "/thumbnails/3/Landscape_1.jpg", 405, "method_not_allowed"),
                                               ("GET", "/elsewhere", 404, "not_found")] {
            let response = service.respond(method, target)
            #expect(response.status == status, "\(method) \(target)")
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.headers["Cache-Control"] == "no-store")
            let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect(json?["error"] as? String == code)
        }
    }

    @Test func anUndecodableSourceIs415AndNotCached() throws {
        let library = NSTemporaryDirectory() + "thumbd-inprocess-lib-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: library) }
        try Data("<html>not a photo</html>".utf8).write(to: URL(fileURLWithPath: library + "/fake.jpg"))
        var config = Config()
        config.library = library
        config.cacheDirectory = library + "/.cache"
        let thumbd = try Thumbd(config: config)
        defer { thumbd.service.pipeline.scheduler.stop() }
        for _ in 0..<2 {
            let done = DispatchSemaphore(value: 0)
            let box = LockedArray<HTTPResponse>()
            thumbd.service.respond(to: HTTPRequest(method: "GET", target: "/thumbnails/5/fake.jpg")) { box.append($0); done.signal() }
            done.wait()
            #expect(box.values[0].status == 415)
            #expect(box.values[0].headers["ETag"] == nil)
        }
        #expect(thumbd.service.pipeline.renderStatistics.snapshot.failed == 2)   // tried again, not remembered
        #expect(thumbd.service.pipeline.disk.statistics.entries == 0)
    }
}
