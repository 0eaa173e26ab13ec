import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// The cache directory, or `entries/` and `tmp/`, removed under a running server (a tmp cleaner,
/// a user clearing the cache): the disk tier makes them again by itself and keeps what is
/// rendered after; `/stats` stops counting what is gone; `/healthz` says 503 only while the
/// cache cannot be made again.
@Suite(.serialized) struct CacheRemovalTests {
    @Test func aCacheDirectoryRemovedWhileServingFromDiskIsMadeAgain() throws {
        let parent = TemporaryDirectory("thumbd-removal")
        let cache = parent.path + "/cache"
        let server = try ServerHarness(cacheDirectory: cache) { $0.memoryCacheBytes = 0 }
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "MISS")
        #expect(try eventually { try server.stat("disk_cache", "entries") == 1 })   // the write follows the response
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
        try FileManager.default.removeItem(atPath: cache)
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "MISS")   // gone: rendered again
        #expect(try eventually { try server.stat("disk_cache", "entries") == 1 })
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
        #expect(try server.stat("disk_cache", "write_errors") == 0)
        #expect(try server.stat("disk_cache", "directory_faults") == 1)
        #expect(try server.stat("renders", "total") == 2)
        #expect(try server.get("/healthz").status == 200)
        let tag = FileManager.default.contents(atPath: cache + "/CACHEDIR.TAG").map { String(decoding: $0, as: UTF8.self) }
        #expect(tag?.contains("created by thumbd") == true)
        try server.restart()
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")
    }

    @Test func entriesRemovedUnderTheMemoryTierAreNotCountedAndLaterRendersAreKept() throws {
        let server = try ServerHarness()
        let photos = ["Landscape_1.jpg", "Landscape_6.jpg", "kodak-dc210-1998-vga.jpg"]
        for photo in photos { #expect(try server.get("/thumbnails/3/\(photo)").header("X-Cache") == "MISS") }
        #expect(try eventually { try server.stat("disk_cache", "entries") == 3 })
        for name in ["entries", "tmp"] { try FileManager.default.removeItem(atPath: server.cacheDirectory + "/" + name) }
        let disk = try #require(server.stats()["disk_cache"] as? [String: Any])
        #expect(disk["entries"] as? Int == 0)
        #expect(disk["bytes"] as? Int == 0)
        #expect(disk["directory_faults"] as? Int == 1)
        #expect(disk["fault"] is NSNull)
        #expect(try server.get("/thumbnails/3/\(photos[0])").header("X-Cache") == "HIT-MEMORY")   // memory still has it
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "MISS")
        #expect(try eventually { try server.stat("disk_cache", "entries") == 1 })
        #expect(try server.stat("disk_cache", "write_errors") == 0)
        try server.restart()
        #expect(try server.get("/thumbnails/5/Landscape_1.jpg").header("X-Cache") == "HIT-DISK")   // kept across the restart
        #expect(try server.get("/thumbnails/3/Landscape_1.jpg").header("X-Cache") == "MISS")      // removed before: gone
    }

    @Test func healthIs503WhileTheCacheCannotBeMadeAgainAndServingGoesOn() throws {
        let top = TemporaryDirectory("thumbd-removal")
        let parent = top.path + "/parent"
        let cache = parent + "/cache"
        let server = try ServerHarness(cacheDirectory: cache)
        #expect(try server.get("/healthz").status == 200)
        try FileManager.default.removeItem(atPath: parent)
        let health = try server.get("/healthz")
        #expect(health.status == 503)
        #expect(health.json["status"] as? String == "degraded")
        #expect((health.json["disk_cache"] as? String)?.contains("the directory that held the cache directory \(cache) is gone too") == true)
        #expect(!FileManager.default.fileExists(atPath: parent))   // never a chain of parents
        let response = try server.get("/thumbnails/3/Landscape_1.jpg")
        #expect(response.status == 200)
        #expect(response.image == ImageHeader(format: "jpeg", width: 393, height: 393))
        let disk = try #require(server.stats()["disk_cache"] as? [String: Any])
        #expect((disk["fault"] as? String) == health.json["disk_cache"] as? String)
        #expect(disk["directory_faults"] as? Int == 1)
        #expect(try server.get("/metrics").text.contains("\nthumbd_disk_cache_failing 1\n"))
        // The parent is back: the next check (at most once a second while failing) makes the cache again.
        #expect(mkdir(parent, 0o755) == 0)
        #expect(try eventually { try server.get("/healthz").status == 200 })
        #expect(try server.get("/healthz").json["status"] as? String == "ok")
        #expect(FileManager.default.fileExists(atPath: cache + "/CACHEDIR.TAG"))
        let metrics = try server.get("/metrics").text
        #expect(metrics.contains("\nthumbd_disk_cache_failing 0\n"))
        #expect(metrics.contains("\nthumbd_disk_cache_directory_faults_total 1\n"))
    }
}
