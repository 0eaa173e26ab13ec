import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// A client key's folder is judged on the file a path reaches, symlinks resolved (issue 27):
/// alike for the listing (items, totals, cursors), the thumbnail URLs it hands out, and
/// prefetch (paths, urls, ranges). Driven through `ThumbService.respond`, with no socket.
@Suite struct ClientScopeTests {
    /// alice/a.jpg and bob/b.jpg, real photos; in alice/ a link to Bob's photo (`x.jpg`), a link
    /// to Bob's folder (`shared`) and a link to her own photo (`y.jpg`).
    final class Service: InProcessServer, @unchecked Sendable {
        let library: TemporaryDirectory

        init() throws {
            let library = TemporaryDirectory("thumbd-scope")
            library.write("alice/a.jpg", Array(Fixtures.photo("Landscape_1.jpg")))
            library.write("bob/b.jpg", Array(Fixtures.photo("galaxy-s-orientation6-gps-vga.jpg")))
            for (target, link) in [("../bob/b.jpg", "alice/x.jpg"), ("../bob", "alice/shared"), ("a.jpg", "alice/y.jpg")] {
                #expect(symlink(target, library.path + "/" + link) == 0, "\(link)")
            }
            self.library = library
            try super.init(library: library.path) { config in
                config.clientKeys = [ClientKeyTests.alice]
                config.adminToken = "the-admin-token"
                config.signingKeys = ["k1:" + String(repeating: "5c", count: 32)]
            }
            thumbd.service.index.rescan()
        }

        /// Sends one request through the router as `key`'s and waits for its response.
        func respond(_ method: String, _ target: String, key: String, body: String = "") -> HTTPResponse {
            respond(method, target, headers: [("Authorization", "Bearer " + key)], body: Array(body.utf8))
        }

        func json(_ response: HTTPResponse) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        }

        func items(_ target: String, key: String) -> [[String: Any]] {
            json(respond("GET", target, key: key))["items"] as? [[String: Any]] ?? []
        }

        func paths(_ target: String, key: String) -> [String] {
            items(target, key: key).compactMap { $0["path"] as? String }.sorted()
        }

        func prefetch(_ body: String) -> (status: Int, json: [String: Any]) {
            let response = respond("POST", "/prefetch", key: "alice-phone-key", body: body)
            return (response.status, json(response))
        }
    }

    @Test func aLinkOutOfTheFolderIsNotListed() throws {
        let service = try Service()
        #expect(service.paths("/assets", key: "alice-phone-key") == ["alice/a.jpg", "alice/y.jpg"])
        let listing = service.json(service.respond("GET", "/assets", key: "alice-phone-key"))
        #expect(listing["total"] as? Int == 2)
        // Page by page, by cursor and by offset, the same two and nothing else.
        var seen: [String] = []
        var target = "/assets?sort=oldest&limit=1"
        while true {
            let page = service.json(service.respond("GET", target, key: "alice-phone-key"))
            #expect(page["total"] as? Int == 2)
            seen += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            guard let next = page["next"] as? String, seen.count < 10 else { break }
            target = "/assets?sort=oldest&limit=1&after=" + next
        }
        #expect(seen.sorted() == ["alice/a.jpg", "alice/y.jpg"])
        #expect(service.paths("/assets?offset=1&limit=5", key: "alice-phone-key").count == 1)
        // The admin sees every path, links included.
        #expect(service.paths("/assets", key: "the-admin-token")
                == ["alice/a.jpg", "alice/shared/b.jpg", "alice/x.jpg", "alice/y.jpg", "bob/b.jpg"])
    }

    /// Thumbnail GETs carry no client key: what a client may have served is what its listing
    /// hands it, signed. Alice's listing signs her two photos, each served; no URL for Bob's.
    @Test func theListingSignsOnlyWhatTheFolderHolds() throws {
        let service = try Service()
        let items = service.items("/assets", key: "alice-phone-key")
        let urls = items.compactMap { ($0["thumbnails"] as? [String: String])?["3"] }
        #expect(urls.count == 2)
        #expect(!urls.contains { $0.contains("x.jpg") || $0.contains("shared") || $0.contains("bob") })
        for url in urls {
            let thumbnail = service.respond("GET", url, key: "alice-phone-key")
            #expect(thumbnail.status == 200, "\(url)")
            #expect(ImageHeader(thumbnail.body) == ImageHeader(format: "jpeg", width: 393, height: 393), "\(url)")
        }
    }

    @Test func aLinkOutOfTheFolderIsNotPrefetched() throws {
        let service = try Service()
        // Named: each counts failed, as a missing path under the folder does.
        for path in ["alice/x.jpg", "alice/shared/b.jpg"] {
            for form in ["paths", "urls"] {
                let job = service.prefetch(#"{"grid": "5", "\#(form)": ["\#(path)"]}"#)
                #expect(job.status == 202, "\(form) \(path)")
                #expect(job.json["total"] as? Int == 1 && job.json["failed"] as? Int == 1, "\(form) \(path)")
            }
        }
        let missing = service.prefetch(#"{"grid": "5", "paths": ["alice/none.jpg"]}"#)
        #expect(missing.status == 202 && missing.json["failed"] as? Int == 1)
        // Outside the folder as named: refused before any lookup, as before.
        let outside = service.prefetch(#"{"grid": "5", "paths": ["bob/b.jpg"]}"#)
        #expect(outside.status == 403 && outside.json["error"] as? String == "outside_prefix")
        // A link to her own photo is hers.
        let own = service.prefetch(#"{"grid": "5", "paths": ["alice/y.jpg", "alice/a.jpg"]}"#)
        #expect(own.status == 202 && own.json["total"] as? Int == 2 && own.json["failed"] as? Int == 0)
        // A range is of her listing: her two photos, nothing failed.
        let range = service.prefetch(#"{"grid": "5", "start": 0, "end": 100}"#)
        #expect(range.status == 202)
        #expect(range.json["total"] as? Int == 2 && range.json["failed"] as? Int == 0)
        let following = service.prefetch(#"{"grid": "5", "after": null, "count": 100}"#)
        #expect(following.status == 202)
        #expect(following.json["total"] as? Int == 2 && following.json["failed"] as? Int == 0)
    }
}
