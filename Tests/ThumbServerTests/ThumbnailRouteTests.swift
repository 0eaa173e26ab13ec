import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// The thumbnail route over a real socket, on the project's own fixture photos.
@Suite(.serialized) struct ThumbnailRouteTests {
    /// 1800x1200, EXIF orientation 1 (recurser/exif-orientation-examples).
    let landscape = "Landscape_1.jpg"
    /// 640x480 stored, EXIF orientation 6 and GPS: displayed 480x640.
    let galaxy = "galaxy-s-orientation6-gps-vga.jpg"

    @Test(arguments: ["1", "3", "5"])
    func gridsHaveTheExactSizeOfAPI(grid: String) throws {
        let server = try ServerHarness()
        for name in Paths.files(in: Paths.fixturePhotos) {
            let source = try #require(VipsHeader.displaySize(Paths.fixturePhotos + "/" + name), "vipsheader \(name)")
            let response = try server.get("/thumbnails/\(grid)/\(encodePath(name))")
            #expect(response.status == 200, "\(name): \(response.text)")
            let expected = ExpectedSize.of(grid: grid, width: source.width, height: source.height)
            let header = try #require(response.image, "\(name) output is not an image")
            #expect(header == ImageHeader(format: "jpeg", width: expected.width, height: expected.height), "\(name) at grid \(grid)")
            #expect(response.header("Content-Type") == "image/jpeg")
            #expect(Int(response.header("Content-Length") ?? "") == response.body.count)
        }
    }

    @Test func cacheTiersGoMissThenMemoryThenDiskAfterARestart() throws {
        let server = try ServerHarness()
        let target = "/thumbnails/3/\(landscape)"
        let first = try server.get(target)
        #expect(first.status == 200)
        #expect(first.header("X-Cache") == "MISS")
        #expect(first.header("Server-Timing")?.hasPrefix("render;dur=") == true)
        let second = try server.get(target)
        #expect(second.header("X-Cache") == "HIT-MEMORY")
        #expect(second.header("Server-Timing") == nil)
        #expect(second.bodyDigest == first.bodyDigest)
        #expect(try server.stat("renders", "total") == 1)
        let digest = try #require(first.header("ETag")).replacingOccurrences(of: "\"", with: "")
        try waitForFile(server.cacheDirectory + "/entries/\(digest.prefix(2))/\(digest)")

        try server.restart()
        let afterRestart = try server.get(target)
        #expect(afterRestart.header("X-Cache") == "HIT-DISK")
        #expect(afterRestart.bodyDigest == first.bodyDigest)
        #expect(afterRestart.header("ETag") == first.header("ETag"))
        #expect(try server.stat("renders", "total") == 0)   // a new process: nothing rendered
        #expect(try server.get(target).header("X-Cache") == "HIT-MEMORY")  // promoted
        #expect(try server.stat("disk_cache", "hits") == 1)
    }

    @Test func headersOfA200AreThoseOfAPI() throws {
        let server = try ServerHarness()
        let response = try server.get("/thumbnails/5/\(landscape)")
        let etag = try #require(response.header("ETag"))
        #expect(etag.count == 36 && etag.hasPrefix("W/\"") && etag.hasSuffix("\""))   // weak: CacheKey.etag
        #expect(response.header("Cache-Control") == "public, no-cache")   // a bare URL: versioned ones are immutable
        #expect(response.header("Vary") == "Accept")
        #expect(response.header("Date") != nil)
        let head = try server.get("/thumbnails/5/\(landscape)", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("Content-Length") == String(response.body.count))
        #expect(head.header("ETag") == etag)
        #expect(head.header("X-Cache") == "HIT-MEMORY")
    }

    @Test func ifNoneMatchGives304() throws {
        let server = try ServerHarness()
        let target = "/thumbnails/3/\(landscape)"
        let etag = try #require(try server.get(target).header("ETag"))
        let opaque = String(etag.dropFirst(2))   // the same tag, strong
        for value in [etag, opaque, "\"other\", \(etag)", "\"other\", \(opaque)", "*"] {
            let response = try server.get(target, headers: ["If-None-Match": value])
            #expect(response.status == 304, "If-None-Match: \(value)")
            #expect(response.body.isEmpty)
            #expect(response.header("ETag") == etag)
            #expect(response.header("Cache-Control") == "public, no-cache")
            #expect(response.header("Vary") == "Accept")
        }
        #expect(try server.get(target, headers: ["If-None-Match": "\"nope\""]).status == 200)
    }

    /// `*` means "any current representation": a source that cannot be rendered has none, so its
    /// error is sent, not a 304 (RFC 9110 §13.2.1: preconditions are ignored when the response
    /// would not be 2xx). A first request with `*` renders, then answers 304.
    @Test func ifNoneMatchStarIs304OnlyForAThumbnailThatExists() throws {
        let server = try ServerHarness(library: Paths.packageRoot + "/Tests/Fixtures")
        let broken = try server.get("/thumbnails/3/broken/empty.jpg", headers: ["If-None-Match": "*"])
        #expect(broken.status == 415)
        let rendersBefore = try server.stat("renders", "total")
        let fresh = try server.get("/thumbnails/3/photos/\(landscape)", headers: ["If-None-Match": "*"])
        #expect(fresh.status == 304)
        #expect(fresh.body.isEmpty)
        #expect(try server.stat("renders", "total") == rendersBefore + 1)
        #expect(try server.get("/thumbnails/3/photos/\(landscape)").header("X-Cache") == "HIT-MEMORY")
    }

    @Test func twentyConcurrentMissesRunOneRender() throws {
        // The render is held until all twenty wait on it: every one after the first joins it,
        // whatever the machine's speed (twenty threads, each blocked on its own request).
        let renderer = GatedRenderer()
        let server = try ServerHarness(renderer: renderer)
        let bodies = LockedArray<[UInt8]>()
        let statuses = LockedArray<Int>()
        let answered = DispatchGroup()
        for _ in 0..<20 {
            answered.enter()
            Thread {
                let response = try? server.get("/thumbnails/1/\(landscape)")
                statuses.append(response?.status ?? -1)
                bodies.append(response?.body ?? [])
                answered.leave()
            }.start()
        }
        #expect(renderer.waitForStarts(1))
        #expect(try eventually { try server.stat("renders", "coalesced") == 19 })
        renderer.open()
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(statuses.values == Array(repeating: 200, count: 20))
        #expect(Set(bodies.values).count == 1)
        #expect(try server.stat("renders", "total") == 1)
        #expect(try server.stat("renders", "coalesced") == 19)
        #expect(renderer.started == [landscape])
    }

    @Test func aReplacedSourceGetsANewETagAndNewPixels() throws {
        let library = NSTemporaryDirectory() + "thumbd-replace-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: library) }
        let photo = library + "/photo.jpg"
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + landscape, toPath: photo)
        let server = try ServerHarness(library: library)
        let before = try server.get("/thumbnails/3/photo.jpg")
        try FileManager.default.removeItem(atPath: photo)
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + galaxy, toPath: photo)
        let after = try server.get("/thumbnails/3/photo.jpg")
        #expect(after.status == 200)
        #expect(after.header("X-Cache") == "MISS")
        #expect(after.header("ETag") != before.header("ETag"))
        #expect(after.bodyDigest != before.bodyDigest)
        #expect(try server.stat("renders", "total") == 2)
    }

    /// The URL memo re-checks the path as requested, through its symlinks: a link removed,
    /// pointed elsewhere, replaced by a file, or a linked directory retargeted is seen at once.
    @Test func aChangedSymlinkIsSeenAtOnce() throws {
        let library = NSTemporaryDirectory() + "thumbd-links-\(UUID().uuidString)"
        let fm = FileManager.default
        for dir in ["d1", "d2"] { try fm.createDirectory(atPath: library + "/" + dir, withIntermediateDirectories: true) }
        defer { try? fm.removeItem(atPath: library) }
        try fm.copyItem(atPath: Paths.fixturePhotos + "/" + landscape, toPath: library + "/a.jpg")
        try fm.copyItem(atPath: Paths.fixturePhotos + "/" + galaxy, toPath: library + "/b.jpg")
        try fm.copyItem(atPath: Paths.fixturePhotos + "/" + landscape, toPath: library + "/d1/p.jpg")
        try fm.copyItem(atPath: Paths.fixturePhotos + "/" + galaxy, toPath: library + "/d2/p.jpg")
        /// Points `name` at `target` the way `ln -sfn` does: a new link renamed over the old.
        func link(_ name: String, to target: String) throws {
            try fm.createSymbolicLink(atPath: library + "/.tmp-link", withDestinationPath: target)
            #expect(rename(library + "/.tmp-link", library + "/" + name) == 0)
        }
        let server = try ServerHarness(library: library)
        let a = try server.get("/thumbnails/3/a.jpg"), b = try server.get("/thumbnails/3/b.jpg")
        #expect(a.bodyDigest != b.bodyDigest)

        try link("link.jpg", to: "b.jpg")
        #expect(try server.get("/thumbnails/3/link.jpg").bodyDigest == b.bodyDigest)
        #expect(try server.get("/thumbnails/3/link.jpg").header("X-Cache") == "HIT-MEMORY")
        try link("link.jpg", to: "a.jpg")
        #expect(try server.get("/thumbnails/3/link.jpg").bodyDigest == a.bodyDigest)
        try fm.removeItem(atPath: library + "/link.jpg")
        #expect(try server.get("/thumbnails/3/link.jpg").status == 404)
        try link("link.jpg", to: "b.jpg")
        #expect(try server.get("/thumbnails/3/link.jpg").bodyDigest == b.bodyDigest)
        try fm.copyItem(atPath: library + "/a.jpg", toPath: library + "/.tmp-file")
        #expect(rename(library + "/.tmp-file", library + "/link.jpg") == 0)   // a file over the link
        #expect(try server.get("/thumbnails/3/link.jpg").bodyDigest == a.bodyDigest)

        try link("album", to: "d1")
        let first = try server.get("/thumbnails/3/album/p.jpg")
        #expect(first.bodyDigest == a.bodyDigest)
        #expect(try server.get("/thumbnails/3/album/p.jpg").header("X-Cache") == "HIT-MEMORY")
        try link("album", to: "d2")
        #expect(try server.get("/thumbnails/3/album/p.jpg").bodyDigest == b.bodyDigest)
    }

    @Test func aDeletedSourceIs404AtOnceEvenWhenItsThumbnailIsCached() throws {
        let library = NSTemporaryDirectory() + "thumbd-delete-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: library) }
        try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + landscape, toPath: library + "/gone.jpg")
        let server = try ServerHarness(library: library)
        #expect(try server.get("/thumbnails/5/gone.jpg").status == 200)
        #expect(try server.get("/thumbnails/5/gone.jpg").header("X-Cache") == "HIT-MEMORY")
        try FileManager.default.removeItem(atPath: library + "/gone.jpg")
        #expect(try server.get("/thumbnails/5/gone.jpg").status == 404)
    }

    /// With the memory tier off, disk hits are sent from the open entry file (sendfile); a
    /// damaged entry, even one changed in place behind the open descriptor, is never served.
    @Test(arguments: ["empty", "half", "flippedInPlace"])
    func aDamagedDiskEntryIsRenderedAgain(damage: String) throws {
        let server = try ServerHarness { $0.memoryCacheBytes = 0 }  // every repeat goes to disk
        let target = "/thumbnails/3/\(landscape)"
        let original = try server.get(target)
        let digest = try #require(original.header("ETag")).replacingOccurrences(of: "\"", with: "").replacingOccurrences(of: "W/", with: "")
        let entry = server.cacheDirectory + "/entries/\(digest.prefix(2))/\(digest)"
        try waitForFile(entry)   // the disk write follows the response
        let stored = try #require(FileManager.default.contents(atPath: entry))
        for _ in 0..<2 {   // the first hit opens and checks the entry, the second reuses it
            let hit = try server.get(target)
            #expect(hit.header("X-Cache") == "HIT-DISK")
            #expect(hit.bodyDigest == original.bodyDigest)
            #expect(hit.header("Content-Length") == original.header("Content-Length"))
        }
        let head = try server.get(target, method: "HEAD")
        #expect(head.header("Content-Length") == original.header("Content-Length"))
        #expect(head.body.isEmpty)
        switch damage {
        case "flippedInPlace":   // same inode, same size: one byte of the image changed
            let handle = try #require(FileHandle(forUpdatingAtPath: entry))
            try handle.seek(toOffset: UInt64(stored.count - 100))
            try handle.write(contentsOf: Data([stored[stored.count - 100] ^ 0xff]))
            try handle.close()
        default:
            _ = FileManager.default.createFile(atPath: entry, contents: damage == "empty" ? Data() : stored.prefix(stored.count / 2))
        }
        let again = try server.get(target)
        #expect(again.status == 200)
        #expect(again.header("X-Cache") == "MISS")
        #expect(again.bodyDigest == original.bodyDigest)
        #expect(try server.stat("disk_cache", "corrupt") == 1)
        #expect(try server.stat("renders", "total") == 2)
        try waitForFile(entry)
        #expect(try server.get(target).header("X-Cache") == "HIT-DISK")
    }

    @Test func theDiskLimitHoldsUnderManyEntries() throws {
        let limit = 2 << 20
        let server = try ServerHarness { $0.diskCacheBytes = limit }
        for grid in ["1", "3", "5"] {
            for name in Paths.files(in: Paths.fixturePhotos) {
                for format in ["jpeg", "png", "webp"] {
                    #expect(try server.get("/thumbnails/\(grid)/\(encodePath(name))?format=\(format)").status == 200)
                    #expect(diskUsage(server.cacheDirectory + "/entries") + diskUsage(server.cacheDirectory + "/tmp") <= limit)
                }
            }
        }
        #expect(try server.stat("disk_cache", "evictions") > 0)
        #expect(try server.stat("disk_cache", "bytes") <= limit)
    }

    @Test func metadataIsStripped() throws {
        let server = try ServerHarness()
        #expect(ImageHeader.containsEXIF(Array(FileManager.default.contents(atPath: Paths.fixturePhotos + "/" + galaxy)!)))
        for format in ["jpeg", "png", "webp"] {
            let response = try server.get("/thumbnails/3/\(galaxy)?format=\(format)")
            #expect(response.status == 200)
            #expect(!response.carriesEXIF, "\(format) output carries EXIF")
        }
    }

    @Test func formatNegotiation() throws {
        let server = try ServerHarness()
        let target = "/thumbnails/5/\(landscape)"
        let webp = try server.get(target, headers: ["Accept": "image/avif,image/webp,*/*;q=0.8"])
        #expect(webp.image?.format == "webp")
        #expect(webp.header("Content-Type") == "image/webp")
        let plain = try server.get(target, headers: ["Accept": "image/*,*/*"])
        #expect(plain.image?.format == "jpeg")
        #expect(try server.get(target, headers: ["Accept": "image/webp;q=0"]).header("Content-Type") == "image/jpeg")
        #expect(webp.header("ETag") != plain.header("ETag"))
        let png = try server.get(target + "?format=png", headers: ["Accept": "image/webp"])
        #expect(png.image == ImageHeader(format: "png", width: 236, height: 236))
        let bad = try server.get(target + "?format=gif")
        #expect(bad.status == 400)
        #expect(bad.json["error"] as? String == "bad_request")
    }

    @Test func countersAddUp() throws {
        let server = try ServerHarness()
        _ = try server.get("/thumbnails/3/\(landscape)")       // miss
        _ = try server.get("/thumbnails/3/\(landscape)")       // memory hit
        _ = try server.get("/thumbnails/5/\(galaxy)")          // miss
        _ = try server.get("/thumbnails/3/nope.jpg")           // 404, no cache lookup
        let stats = try server.stats()
        let memory = try #require(stats["memory_cache"] as? [String: Any])
        let disk = try #require(stats["disk_cache"] as? [String: Any])
        let renders = try #require(stats["renders"] as? [String: Any])
        let requests = try #require(stats["requests"] as? [String: Any])
        func n(_ d: [String: Any], _ k: String) -> Int { (d[k] as? NSNumber)?.intValue ?? -1 }
        #expect(n(memory, "hits") == 1)
        #expect(n(memory, "misses") == 2)
        #expect(n(memory, "misses") == n(disk, "hits") + n(disk, "misses") + n(renders, "coalesced"))
        #expect(n(disk, "misses") == n(renders, "total"))
        #expect(n(requests, "total") == 4)   // this /stats request is counted after it is answered
        let byStatus = try #require(requests["by_status"] as? [String: Any])
        #expect(n(byStatus, "200") == 3)
        #expect(n(byStatus, "404") == 1)
        #expect((stats["connections"] as? [String: Any]).map { n($0, "total") } == 5)
    }
}

/// Waits up to 5 s for a cache entry file to be written (disk writes follow the response).
func waitForFile(_ path: String) throws {
    let deadline = Date().addingTimeInterval(5)
    while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(5_000) }
    usleep(20_000)  // renamed into place complete, but let the index update too
}

/// Bytes the regular files under `directory` occupy, in allocated blocks as `du` counts them.
func diskUsage(_ directory: String) -> Int { DiskUsage.bytes(under: [directory]) }

/// An array appended to from many threads.
final class LockedArray<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T] = []
    func append(_ value: T) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [T] { lock.lock(); defer { lock.unlock() }; return storage }
}
