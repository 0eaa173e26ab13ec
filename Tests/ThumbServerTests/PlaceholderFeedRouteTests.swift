import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// `GET /cluster/placeholders` (docs/cluster.md, "Placeholders"), in-process: an admin route;
/// the placeholders this node made, from a cursor, in batches; a cursor of another run (another
/// `epoch`) starts again from the beginning; bad values are 400.
@Suite struct PlaceholderFeedRouteTests {
    static let token = [("Authorization", "Bearer s3cret")]

    func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
    }

    @Test func aPeerGetsWhatThisNodeMadeFromItsCursor() throws {
        let server = try InProcessServer { config in
            config.adminToken = "s3cret"
            config.thumbhashBackfill = false
            config.thumbhashPreviews = false
        }
        #expect(eventually { server.thumbd.service.index.isComplete })
        #expect(server.respond("GET", "/cluster/placeholders").status == 401)

        let empty = server.respond("GET", "/cluster/placeholders", headers: Self.token)
        #expect(empty.status == 200 && empty.headers["Content-Type"] == "application/json")
        let epoch = try #require(json(empty)["epoch"] as? String)
        #expect(json(empty)["next"] as? Int == 0 && json(empty)["more"] as? Bool == false)
        #expect((json(empty)["items"] as? [Any])?.isEmpty == true)

        // Two renders make two placeholders, fed in the order made.
        for name in ["kodak-dc210-1998-vga.jpg", "Landscape_1.jpg"] {
            #expect(server.respond("GET", "/thumbnails/3/" + name).status == 200)
        }
        server.publishPlaceholders()   // listed from their publication on
        let listing = json(server.respond("GET", "/assets?limit=100"))["items"] as? [[String: Any]] ?? []
        let listed = Dictionary(uniqueKeysWithValues: listing.map { ($0["path"] as? String ?? "", $0["thumbhash"] as? String) })
        let size = { (name: String) in (try FileManager.default.attributesOfItem(atPath: Paths.fixturePhotos + "/" + name)[.size] as? Int) }

        let first = json(server.respond("GET", "/cluster/placeholders?after=0&limit=1", headers: Self.token))
        #expect(first["epoch"] as? String == epoch && first["next"] as? Int == 1 && first["more"] as? Bool == true)
        let item = try #require((first["items"] as? [[String: Any]])?.first)
        #expect(item["path"] as? String == "kodak-dc210-1998-vga.jpg")
        #expect(item["bytes"] as? Int == (try size("kodak-dc210-1998-vga.jpg")))
        #expect(item["thumbhash"] as? String == listed["kodak-dc210-1998-vga.jpg"] ?? "none listed")
        #expect((item["mtime_ns"] as? Int ?? 0) > 0)

        let rest = json(server.respond("GET", "/cluster/placeholders?after=1&epoch=\(epoch)", headers: Self.token))
        #expect(rest["next"] as? Int == 2 && rest["more"] as? Bool == false)
        #expect((rest["items"] as? [[String: Any]])?.map { $0["path"] as? String } == ["Landscape_1.jpg"])
        let none = json(server.respond("GET", "/cluster/placeholders?after=2&epoch=\(epoch)", headers: Self.token))
        #expect(none["next"] as? Int == 2 && (none["items"] as? [Any])?.isEmpty == true)

        // A cursor of another run: from the start.
        let again = json(server.respond("GET", "/cluster/placeholders?after=2&epoch=0123abcd", headers: Self.token))
        #expect(again["next"] as? Int == 2 && (again["items"] as? [Any])?.count == 2)

        for bad in ["after=-1", "limit=0", "limit=10001", "after=x", "since=1", "after=1&after=2"] {
            #expect(server.respond("GET", "/cluster/placeholders?" + bad, headers: Self.token).status == 400, "\(bad)")
        }
        #expect(server.respond("POST", "/cluster/placeholders", headers: Self.token).status == 405)
    }
}

/// `ClusterPlaceholders` against a stand-in peer (`CannedPeer`) whose feed offers three
/// placeholders: one of a file this node lists as it is (kept at once), one of a file this node's
/// scans have not seen yet (kept once a scan lists it, with no new answer from the peer), one of
/// an older version of a file listed here (never kept).
@Suite struct ClusterPlaceholdersPullTests {
    static func identity(_ path: String) throws -> (size: Int, mtime: Int64) {
        var st = stat()
        try #require(stat(path, &st) == 0)
        return (Int(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    @Test func anEntryForAFileNotYetScannedIsKeptOnceAScanListsIt() throws {
        let library = TemporaryDirectory("thumbd-pull")
        let photo = Array(Fixtures.photo("Landscape_1.jpg"))
        library.write("listed.jpg", photo)
        library.write("older.jpg", photo)
        let listed = try Self.identity(library.path + "/listed.jpg"), older = try Self.identity(library.path + "/older.jpg")
        // late.jpg: written after the first scan, with the identity the peer's feed names.
        let late = (size: photo.count, mtime: Int64(1_700_000_000_123_456_789))
        let hash = "3OcRJYB4d3h/iIAHeId3iHeIeA==", other = "HBkSHYSIeHiPiHh8eJd4eIaIhwiF"
        let body = """
            {"epoch":"e1","next":3,"more":false,"items":[\
            {"path":"listed.jpg","bytes":\(listed.size),"mtime_ns":\(listed.mtime),"thumbhash":"\(hash)"},\
            {"path":"late.jpg","bytes":\(late.size),"mtime_ns":\(late.mtime),"thumbhash":"\(other)"},\
            {"path":"older.jpg","bytes":\(older.size),"mtime_ns":\(older.mtime - 1),"thumbhash":"\(hash)"}]}
            """
        // The feed's entries once; after that, none more (as a peer answers a cursor at its end).
        let end = #"{"epoch":"e1","next":3,"more":false,"items":[]}"#
        let answer = { (body: String) in Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8) }
        let peer = try CannedPeer(.replies([answer(body), answer(end)]))
        defer { peer.stop() }
        let server = try InProcessServer(library: library.path) { config in
            config.thumbhashBackfill = false
            config.thumbhashPreviews = false
            config.indexRescanSeconds = 3600
            config.peers = ["127.0.0.1:\(peer.port)", "127.0.0.1:1"]
            config.node = "127.0.0.1:1"
        }
        let index = server.thumbd.service.index
        func thumbhash(_ name: String) -> String? {
            index.listing(order: .oldest, offset: 0, limit: 10).items.first { $0.path.description == name }
                .flatMap { index.thumbhash(of: $0) }.map { Data($0).base64EncodedString() }
        }
        #expect(eventually { thumbhash("listed.jpg") == hash })
        #expect(thumbhash("older.jpg") == nil)

        library.write("late.jpg", photo)
        var times = [timespec(tv_sec: Int(late.mtime / 1_000_000_000), tv_nsec: Int(late.mtime % 1_000_000_000)),
                     timespec(tv_sec: Int(late.mtime / 1_000_000_000), tv_nsec: Int(late.mtime % 1_000_000_000))]
        try #require(utimensat(AT_FDCWD, library.path + "/late.jpg", &times, 0) == 0)
        index.rescan()
        // The peer gives the entry once (any later answer is empty): it had waited here.
        #expect(eventually { thumbhash("late.jpg") == other })
        #expect(thumbhash("older.jpg") == nil)
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(server.respond("GET", "/stats").body)) as? [String: Any])
        #expect((stats["placeholders"] as? [String: Any])?["from_peers"] as? Int == 2)
    }
}
