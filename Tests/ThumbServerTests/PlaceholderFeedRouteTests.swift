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
