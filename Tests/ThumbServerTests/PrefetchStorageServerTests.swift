import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// A prefetch job counts what it could not store as `not_stored`, with the reason, never as
/// `done` (docs/API.md, "Prefetch").
@Suite(.serialized) struct PrefetchStorageServerTests {
    func post(_ server: ServerHarness, _ body: String) throws -> TestResponse {
        let request = "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        return try TestClient.parse(TestClient.exchange(port: server.port, Array(request.utf8)))
    }

    func finalState(_ server: ServerHarness, of accepted: TestResponse) throws -> [String: Any] {
        let id = accepted.json["id"] as? Int ?? -1
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let job = try server.get("/prefetch/\(id)").json
            if job["state"] as? String != "running" { return job }
            usleep(50_000)
        }
        return try server.get("/prefetch/\(id)").json
    }

    static let photos = ["Landscape_1.jpg", "Landscape_6.jpg", "kodak-dc210-1998-vga.jpg"]

    @Test func aPrefetchWhoseCacheIsGoneCountsNotStoredAndSaysWhy() throws {
        let top = TemporaryDirectory("thumbd-prefetch-store")
        let cache = top.path + "/parent/cache"
        let server = try ServerHarness(cacheDirectory: cache)
        try FileManager.default.removeItem(atPath: top.path + "/parent")
        let paths = Self.photos.map { "\"\($0)\"" }.joined(separator: ",")
        let accepted = try post(server, #"{"grid": "3", "paths": [\#(paths)]}"#)
        #expect(accepted.status == 202)
        #expect(accepted.json["not_stored"] as? Int == 0)
        #expect(accepted.json["not_stored_reason"] is NSNull)
        let job = try finalState(server, of: accepted)
        #expect(job["state"] as? String == "done")
        #expect(job["done"] as? Int == 0)
        #expect(job["failed"] as? Int == 0)
        #expect(job["not_stored"] as? Int == 3)
        let why = try #require(job["not_stored_reason"] as? String)
        #expect(why.contains("cannot keep thumbnails"))
        #expect(why.contains("the directory that held the cache directory \(cache) is gone too"))
        // Nothing kept: a prefetch alone never writes to memory, so each GET renders.
        for photo in Self.photos {
            #expect(try server.get("/thumbnails/3/\(photo)").header("X-Cache") == "MISS", "\(photo)")
        }
        let prefetch = try #require(server.stats()["prefetch"] as? [String: Any])
        #expect(prefetch["not_stored"] as? Int == 3)
        #expect(prefetch["done"] as? Int == 0)
        #expect(try server.get("/metrics").text.contains("\nthumbd_prefetch_items_total{outcome=\"not_stored\"} 3\n"))
    }

    /// Prefetched entries (on disk only) removed under the server: a prefetch of them again does
    /// not count them cached (skipped) while every GET would render them.
    @Test func aPrefetchAfterEntriesWereRemovedRendersAndKeepsThem() throws {
        let server = try ServerHarness()
        let paths = Self.photos.map { "\"\($0)\"" }.joined(separator: ",")
        let body = #"{"grid": "5", "paths": [\#(paths)]}"#
        #expect(try finalState(server, of: try post(server, body))["done"] as? Int == 3)
        for name in ["entries", "tmp"] { try FileManager.default.removeItem(atPath: server.cacheDirectory + "/" + name) }
        let job = try finalState(server, of: try post(server, body))
        #expect(job["skipped"] as? Int == 0)
        #expect(job["done"] as? Int == 3)
        #expect(job["not_stored"] as? Int == 0)
        for photo in Self.photos {
            #expect(try server.get("/thumbnails/5/\(photo)").header("X-Cache") == "HIT-DISK", "\(photo)")
        }
        #expect(try server.stat("renders", "total") == 6)
    }
}
