import Foundation
import Library
import Testing
import TestSupport
@testable import ThumbServer

/// Keyset cursors of `/assets` and range prefetches, and the listing generation (docs/API.md,
/// "Listing", "Prefetch").
@Suite(.serialized) struct CursorTests {
    typealias LinksLibrary = PrefetchTests.LinksLibrary

    func items(_ response: TestResponse) -> [String] {
        (response.json["items"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
    }

    func post(_ server: ServerHarness, _ body: String) throws -> TestResponse {
        let request = "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        return try TestClient.parse(TestClient.exchange(port: server.port, Array(request.utf8)))
    }

    /// A server over `count` hard links (`link-0000.jpg`…: one mtime, so one `taken`, ordered
    /// by path in both sorts), its first scan done, rescanned only when the test says.
    func server(_ library: LinksLibrary) throws -> ServerHarness {
        let server = try ServerHarness(library: library.root) {
            $0.indexRescanSeconds = 3600
            $0.libraryWatch = false
            $0.makeNoPlaceholders()
        }
        server.waitForInitialScan()
        return server
    }

    /// (`LibraryTests.KeysetPagingTests` does the same in both sorts with distinct capture times.)
    @Test func pagingByCursorWhilePhotosAreAddedDeletedAndRenamedShowsEachOnceInOrder() throws {
        let library = try LinksLibrary(count: 30)
        let server = try server(library)
        let root = library.root, sort = "newest"
        let source = root + "-source.jpg"   // one more link to the same file, outside the library
        #expect(link(root + "/link-0000.jpg", source) == 0)
        defer { unlink(source) }
        var present = Set(items(try server.get("/assets?sort=\(sort)&limit=1000")))
        var seen: [String] = []
        var next: String?
        var step = 0
        var generations: [Int] = []
        repeat {
            let page = try server.get("/assets?sort=\(sort)&limit=4" + (next.map { "&after=" + $0 } ?? ""))
            #expect(page.status == 200)
            seen += items(page)
            generations.append(try #require(page.json["generation"] as? Int))
            #expect(page.json["generation"] as? Int == (try server.stats()["library"] as? [String: Any])?["generation"] as? Int)
            next = page.json["next"] as? String
            guard let last = items(page).last, next != nil else { break }
            // A photo arrives at the top (its path sorts first), one not yet shown is deleted,
            // one is renamed, and every other time the cursor's own item is deleted; then a rescan.
            step += 1
            #expect(link(source, root + "/a-new-\(step).jpg") == 0)
            let ahead = items(try server.get("/assets?sort=\(sort)&limit=1000"))
                .drop(while: { $0 != last }).dropFirst().filter { $0.hasPrefix("link-") }
            if ahead.count > 4 {
                unlink(root + "/" + ahead[ahead.startIndex + 1])
                rename(root + "/" + ahead[ahead.startIndex + 2], root + "/zz-renamed-\(step).jpg")
            }
            if step % 2 == 0, last.hasPrefix("link-") { unlink(root + "/" + last) }
            server.thumbd.service.index.rescan()
            present.formIntersection(items(try server.get("/assets?sort=\(sort)&limit=1000")))
        } while step < 100
        #expect(step > 5 && step < 100)
        #expect(Set(seen).count == seen.count, "shown twice: \(seen)")
        let throughout = items(try server.get("/assets?sort=\(sort)&limit=1000")).filter(present.contains)
        #expect(throughout.count >= 12)
        #expect(seen.filter(present.contains) == throughout)
        #expect(Set(generations).count == generations.count, "each page after a change has a new generation")
    }

    @Test func aPageCarriesTheOffsetItStartsAtAndNoNextAtTheEnd() throws {
        let library = try LinksLibrary(count: 5)
        let server = try server(library)
        let first = try server.get("/assets?limit=2")
        #expect(items(first) == ["link-0000.jpg", "link-0001.jpg"])
        #expect(first.json["offset"] as? Int == 0)
        let next = try #require(first.json["next"] as? String)
        #expect(next.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(link(library.root + "/link-0000.jpg", library.root + "/a-top.jpg") == 0)
        server.thumbd.service.index.rescan()
        let second = try server.get("/assets?limit=2&after=\(next)")
        #expect(items(second) == ["link-0002.jpg", "link-0003.jpg"])
        #expect(second.json["offset"] as? Int == 3)   // a-top.jpg came in before
        #expect(second.json["total"] as? Int == 6)
        let third = try server.get("/assets?limit=2&after=\(try #require(second.json["next"] as? String))")
        #expect(items(third) == ["link-0004.jpg"])
        #expect(third.json["next"] is NSNull)
        // Offsets keep working, and say where they start.
        let byOffset = try server.get("/assets?offset=2&limit=2")
        #expect(items(byOffset) == ["link-0001.jpg", "link-0002.jpg"])
        #expect(byOffset.json["offset"] as? Int == 2)
        #expect(byOffset.json["next"] is String)
    }

    @Test func aCursorWhoseItemWasDeletedContinuesFromItsPlace() throws {
        let library = try LinksLibrary(count: 6)
        let server = try server(library)
        let first = try server.get("/assets?sort=oldest&limit=3")
        #expect(items(first) == ["link-0000.jpg", "link-0001.jpg", "link-0002.jpg"])
        unlink(library.root + "/link-0002.jpg")
        unlink(library.root + "/link-0003.jpg")
        server.thumbd.service.index.rescan()
        let next = try #require(first.json["next"] as? String)
        #expect(items(try server.get("/assets?sort=oldest&after=\(next)")) == ["link-0004.jpg", "link-0005.jpg"])
    }

    @Test func theGenerationChangesWithTheListingOnly() throws {
        let library = try LinksLibrary(count: 3)
        let server = try server(library)
        func generation() throws -> Int? { try server.get("/assets?limit=0").json["generation"] as? Int }
        let before = try #require(try generation())
        server.thumbd.service.index.rescan()
        #expect(try generation() == before)
        #expect(link(library.root + "/link-0000.jpg", library.root + "/added.jpg") == 0)
        server.thumbd.service.index.rescan()
        #expect(try generation() == before + 1)
        #expect((try server.stats()["library"] as? [String: Any])?["generation"] as? Int == before + 1)
        rename(library.root + "/added.jpg", library.root + "/renamed.jpg")
        server.thumbd.service.index.rescan()
        #expect(try generation() == before + 2)
        unlink(library.root + "/renamed.jpg")
        server.thumbd.service.index.rescan()
        #expect(try generation() == before + 3)
        server.thumbd.service.index.rescan()
        #expect(try generation() == before + 3)
    }

    /// The listing that follows the library watch (rescans an hour apart) counts its
    /// generations as a rescan does, and a cursor continues across the watch's updates.
    @Test func theWatchDrivenListingChangesTheGenerationAndKeepsCursors() throws {
        let library = try LinksLibrary(count: 4)
        let server = try ServerHarness(library: library.root) {
            $0.indexRescanSeconds = 3600
            $0.libraryWatch = true
            $0.makeNoPlaceholders()
        }
        server.waitForInitialScan()
        let first = try server.get("/assets?limit=2")
        let before = try #require(first.json["generation"] as? Int)
        let next = try #require(first.json["next"] as? String)
        #expect(link(library.root + "/link-0000.jpg", library.root + "/a-top.jpg") == 0)
        #expect(try eventually { try server.get("/assets?limit=0").json["generation"] as? Int == before + 1 })
        #expect(items(try server.get("/assets?limit=0")).isEmpty)
        #expect(try server.get("/assets").json["total"] as? Int == 5)
        #expect(items(try server.get("/assets?after=\(next)")) == ["link-0002.jpg", "link-0003.jpg"])
    }

    @Test func aRangePrefetchAfterACursorWarmsTheItemsThatFollowIt() throws {
        let library = try LinksLibrary(count: 8)
        let server = try server(library)
        let first = try server.get("/assets?limit=3")
        let next = try #require(first.json["next"] as? String)
        #expect(link(library.root + "/link-0000.jpg", library.root + "/a-top.jpg") == 0)   // offsets shift by one
        server.thumbd.service.index.rescan()
        let accepted = try post(server, #"{"grid": "1", "sort": "newest", "after": "\#(next)", "count": 3}"#)
        #expect(accepted.status == 202)
        #expect(accepted.json["total"] as? Int == 3)
        let id = try #require(accepted.json["id"] as? Int)
        let deadline = Date().addingTimeInterval(60)
        while try server.get("/prefetch/\(id)").json["state"] as? String == "running", Date() < deadline { usleep(50_000) }
        #expect(try server.get("/prefetch/\(id)").json["done"] as? Int == 3)
        for (name, tier) in [("link-0002.jpg", "MISS"), ("link-0003.jpg", "HIT-DISK"), ("link-0004.jpg", "HIT-DISK"),
                             ("link-0005.jpg", "HIT-DISK"), ("link-0006.jpg", "MISS")] {
            #expect(try server.get("/thumbnails/1/\(name)").header("X-Cache") == tier, "\(name)")
        }
        // Without `after`, `count` items from the top.
        let top = try post(server, #"{"grid": "5", "sort": "oldest", "after": null, "count": 2}"#)
        #expect(top.status == 202)
        #expect(top.json["total"] as? Int == 2)
    }

    /// Every way a cursor can be wrong is 400 `bad_cursor`, at `/assets` and in a prefetch body.
    @Test func cursorsThatAreNotOursOrOfAnotherSortAre400BadCursor() throws {
        let library = try LinksLibrary(count: 4)
        let server = try server(library)
        let newest = try #require(try server.get("/assets?limit=1").json["next"] as? String)
        let oldest = try #require(try server.get("/assets?sort=oldest&limit=1").json["next"] as? String)
        var bytes = try #require(Base64URL.decode(newest))
        #expect(bytes.count == 1 + 1 + 8 + "link-0000.jpg".utf8.count + 8)
        #expect(bytes[0] == 1)
        var otherVersion = bytes
        otherVersion[0] = 2
        bytes[12] ^= 0x01   // one byte of the path changed, the check left as it was
        let bad: [(String, String)] = [
            ("garbage", "!!not-base64!!"), ("empty", ""), ("short", "AQA"), ("truncated", String(newest.dropLast(3))),
            ("padded", newest + "=="), ("version 2", Base64URL.encode(otherVersion)), ("tampered", Base64URL.encode(bytes)),
            ("another sort", oldest), ("percent-encoded garbage", "%00%FF"),
        ]
        for (what, cursor) in bad {
            let response = try server.get("/assets?sort=newest&after=\(cursor)")
            #expect(response.status == 400, "\(what)")
            #expect(response.json["error"] as? String == "bad_cursor", "\(what)")
            let prefetch = try post(server, #"{"grid": "1", "sort": "newest", "after": \#(JSON.quote(cursor)), "count": 2}"#)
            #expect(prefetch.status == 400, "\(what)")
            #expect(prefetch.json["error"] as? String == "bad_cursor", "\(what)")
        }
        #expect(try server.get("/assets?after=\(oldest)").json["error"] as? String == "bad_cursor")   // sort defaults to newest
        #expect(try server.get("/assets?sort=oldest&after=\(oldest)").status == 200)
        #expect(try post(server, #"{"grid": "1", "after": 7, "count": 2}"#).json["error"] as? String == "bad_cursor")
        // A cursor beside an offset, or after/count beside start/end: 400 bad_request.
        #expect(try server.get("/assets?after=\(newest)&offset=1").json["error"] as? String == "bad_request")
        for body in [#"{"grid": "1", "after": "\#(newest)", "count": 2, "start": 0, "end": 2}"#,
                     #"{"grid": "1", "after": "\#(newest)"}"#, #"{"grid": "1", "count": -1}"#,
                     #"{"grid": "1", "after": "\#(newest)", "count": 2, "paths": ["link-0000.jpg"]}"#] {
            #expect(try post(server, body).json["error"] as? String == "bad_request", "\(body)")
        }
        #expect(try server.get("/healthz").status == 200)
    }
}
