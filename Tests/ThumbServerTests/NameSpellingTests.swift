import Foundation
import Testing
@testable import ThumbServer

/// File names as the disk has them (README, "Asset path"): two names that differ only in
/// Unicode form are two assets, each listed under its own spelling and reached by it; a name
/// that is not UTF-8 is listed and reached through its byte-level percent-encoding (`url`).
@Suite struct NameSpellingTests {
    /// A library in a temporary directory; names are made from raw bytes.
    final class Names {
        let root = NSTemporaryDirectory() + "thumbd-names-\(UUID().uuidString)"
        static let nfc = "café.jpg".precomposedStringWithCanonicalMapping
        static let nfd = "café.jpg".decomposedStringWithCanonicalMapping
        /// `latin1-caf\xE9.jpg`: `é` in Latin-1, as an old Windows share names it.
        static let latin1: [UInt8] = Array("latin1-caf".utf8) + [0xE9] + Array(".jpg".utf8)
        /// `caf\xE9` (a directory) and `\xE0 la plage.jpg` inside it.
        static let latin1Directory: [UInt8] = Array("caf".utf8) + [0xE9]
        static let latin1Nested: [UInt8] = [0xE0] + Array(" la plage.jpg".utf8)

        init() throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        /// Copies fixture `photo` to `name` (bytes, relative to the root) with `open`/`rename`
        /// on the raw bytes: Foundation would not keep bytes that are not UTF-8.
        func copy(_ photo: String, to name: [UInt8]) throws {
            let staging = root + "/.staging-\(UUID().uuidString)"
            try FileManager.default.copyItem(atPath: Paths.fixturePhotos + "/" + photo, toPath: staging)
            let target = (Array(root.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
            guard rename(staging, target) == 0 else { throw POSIXError(.EIO) }
        }

        func makeDirectory(_ name: [UInt8]) throws {
            let target = (Array(root.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
            guard mkdir(target, 0o755) == 0 else { throw POSIXError(.EIO) }
        }
    }

    func items(_ response: TestResponse) -> [[String: Any]] { response.json["items"] as? [[String: Any]] ?? [] }

    /// The thumbnail at grid 1 (`contain`, never enlarged) of each file, by its own URL.
    func thumbnailSize(_ server: ServerHarness, _ url: String) throws -> (status: Int, width: Int, height: Int, etag: String?) {
        let response = try server.get("/thumbnails/1/" + url)
        return (response.status, response.image?.width ?? -1, response.image?.height ?? -1, response.header("ETag"))
    }

    /// `café.jpg` in NFC (kodak, 640x480) and in NFD (Landscape_1, 1800x1200) side by side:
    /// both listed, each with its own size, each URL rendering its own file, two cache entries.
    @Test func nfcAndNfdTwinsAreTwoAssetsEachReachedByItsOwnSpelling() throws {
        let names = try Names()
        try names.copy("kodak-dc210-1998-vga.jpg", to: Array(Names.nfc.utf8))
        try names.copy("Landscape_1.jpg", to: Array(Names.nfd.utf8))
        let server = try ServerHarness(library: names.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()

        let listing = try server.get("/assets")
        #expect(listing.json["total"] as? Int == 2)
        let listed = items(listing)
        let nfcItem = try #require(listed.first { ($0["path"] as? String).map { Array($0.utf8) == Array(Names.nfc.utf8) } ?? false })
        let nfdItem = try #require(listed.first { ($0["path"] as? String).map { Array($0.utf8) == Array(Names.nfd.utf8) } ?? false })
        #expect(nfcItem["width"] as? Int == 640 && nfcItem["height"] as? Int == 480)
        #expect(nfcItem["bytes"] as? Int == 79_837)
        #expect(nfcItem["url"] as? String == "caf%C3%A9.jpg")
        #expect(nfdItem["width"] as? Int == 1800 && nfdItem["height"] as? Int == 1200)
        #expect(nfdItem["bytes"] as? Int == 347_327)
        #expect(nfdItem["url"] as? String == "cafe%CC%81.jpg")
        // Ties (both dated by mtime, perhaps the same second) are broken by the path's bytes.
        #expect(listed.count == 2)

        // Each URL renders its own file: 640x480 kept; 1800x1200 contained in 1179x2358.
        for _ in 0..<2 {   // a miss, then a memory hit through the URL memo
            let nfc = try thumbnailSize(server, "caf%C3%A9.jpg")
            let nfd = try thumbnailSize(server, "cafe%CC%81.jpg")
            #expect(nfc.status == 200 && nfc.width == 640 && nfc.height == 480)
            #expect(nfd.status == 200 && nfd.width == 1179 && nfd.height == 786)
            #expect(nfc.etag != nil && nfc.etag != nfd.etag)
        }
        #expect(try server.get("/thumbnails/1/cafe%CC%81.jpg").header("X-Cache") == "HIT-MEMORY")

        // With the NFC twin gone, both spellings reach the NFD file and are one cache entry.
        #expect(unlink(names.root + "/" + Names.nfc) == 0)
        let viaNFC = try server.get("/thumbnails/1/caf%C3%A9.jpg")
        #expect(viaNFC.status == 200 && viaNFC.image?.width == 1179 && viaNFC.image?.height == 786)
        #expect(viaNFC.header("X-Cache") == "HIT-MEMORY")
        #expect(viaNFC.header("ETag") == (try server.get("/thumbnails/1/cafe%CC%81.jpg").header("ETag")))
    }

    /// The twins survive a restart of the persisted index as two records.
    @Test func twinsArePersistedApart() throws {
        let names = try Names()
        try names.copy("kodak-dc210-1998-vga.jpg", to: Array(Names.nfc.utf8))
        try names.copy("Landscape_1.jpg", to: Array(Names.nfd.utf8))
        let server = try ServerHarness(library: names.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()
        try server.restart()
        let urls = Set(items(try server.get("/assets")).compactMap { $0["url"] as? String })
        #expect(urls == ["caf%C3%A9.jpg", "cafe%CC%81.jpg"])
        server.waitForInitialScan()
        #expect(server.thumbd.service.index.rescan().headerReads == 0)
    }

    /// `latin1-caf\xE9.jpg` and `caf\xE9/\xE0 la plage.jpg` are listed with a byte-level `url`
    /// and a display `path`, rendered through that `url`, prefetched by it, and kept across a
    /// restart; a non-UTF-8 path that names nothing is still a 400.
    @Test func namesThatAreNotUTF8AreListedAndReachable() throws {
        let names = try Names()
        try names.copy("kodak-dc210-1998-vga.jpg", to: Names.latin1)
        try names.makeDirectory(Names.latin1Directory)
        try names.copy("Landscape_1.jpg", to: Names.latin1Directory + [UInt8(ascii: "/")] + Names.latin1Nested)
        let server = try ServerHarness(library: names.root) { $0.indexRescanSeconds = 3600 }
        server.waitForInitialScan()

        let listed = items(try server.get("/assets"))
        #expect(listed.count == 2)
        let flat = try #require(listed.first { $0["url"] as? String == "latin1-caf%E9.jpg" })
        #expect(flat["path"] as? String == "latin1-caf\u{FFFD}.jpg")
        #expect(flat["width"] as? Int == 640 && flat["height"] as? Int == 480 && flat["bytes"] as? Int == 79_837)
        let nested = try #require(listed.first { $0["url"] as? String == "caf%E9/%E0%20la%20plage.jpg" })
        #expect(nested["width"] as? Int == 1800 && nested["height"] as? Int == 1200)

        let a = try thumbnailSize(server, "latin1-caf%E9.jpg")
        #expect(a.status == 200 && a.width == 640 && a.height == 480)
        let b = try thumbnailSize(server, "caf%E9/%E0%20la%20plage.jpg")
        #expect(b.status == 200 && b.width == 1179 && b.height == 786)
        #expect(try server.get("/thumbnails/1/latin1-caf%E9.jpg").header("X-Cache") == "HIT-MEMORY")
        #expect(try server.get("/thumbnails/1/latin1-caf%e9.jpg").status == 200)   // either hex case
        // Bytes that are not UTF-8 and name no file stay a bad request (docs/API.md).
        #expect(try server.get("/thumbnails/1/latin1-caf%E8.jpg").status == 400)
        #expect(try server.get("/thumbnails/1/latin1-caf%EF%BF%BD.jpg").status == 404)   // the display path names nothing

        // Prefetch by `url` (the listing's form) warms what a GET of the same grid reads, and so
        // does a range of the listing.
        func prefetch(_ body: String) throws -> [String: Any] {
            let accepted = try TestClient.parse(TestClient.exchange(port: server.port, Array((
                "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)))
            #expect(accepted.status == 202)
            #expect(accepted.json["total"] as? Int == 2 && accepted.json["failed"] as? Int == 0)
            let deadline = Date().addingTimeInterval(60)
            var job = accepted.json
            while job["state"] as? String == "running" && Date() < deadline {
                usleep(50_000)
                job = try server.get("/prefetch/\(accepted.json["id"] as? Int ?? -1)").json
            }
            return job
        }
        let byURL = try prefetch(#"{"grid": "3", "urls": ["caf%E9/%E0%20la%20plage.jpg", "latin1-caf%E9.jpg"]}"#)
        #expect(byURL["state"] as? String == "done" && byURL["done"] as? Int == 2)
        let warmed = try server.get("/thumbnails/3/caf%E9/%E0%20la%20plage.jpg")
        #expect(warmed.status == 200 && warmed.header("X-Cache") == "HIT-DISK")
        #expect(warmed.image?.width == 393 && warmed.image?.height == 393)
        let byRange = try prefetch(#"{"grid": "5", "start": 0, "end": 10}"#)
        #expect(byRange["state"] as? String == "done" && byRange["done"] as? Int == 2)
        #expect(try server.get("/thumbnails/5/latin1-caf%E9.jpg").header("X-Cache") == "HIT-DISK")
        let badEscape = #"{"grid": "3", "urls": ["latin1-caf%E.jpg"]}"#
        #expect(try TestClient.parse(TestClient.exchange(port: server.port, Array((
            "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(badEscape.utf8.count)\r\n\r\n\(badEscape)").utf8))).status == 400)

        // The persisted index keeps the names (stored as blobs) across a restart.
        try server.restart()
        let urls = Set(items(try server.get("/assets")).compactMap { $0["url"] as? String })
        #expect(urls == ["latin1-caf%E9.jpg", "caf%E9/%E0%20la%20plage.jpg"])
        server.waitForInitialScan()
        #expect(server.thumbd.service.index.rescan().headerReads == 0)
    }
}
