import Foundation
import Testing
import Rendering
@testable import ThumbServer
import Thumbnails
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// Versioned thumbnail URLs (README, "URLs" and "Headers on 200"): the URL `/assets` lists per
/// grid carries `?v=` the source's version and may be cached for good; a bare path URL, or a
/// `v` that is not the source's current one, must be revalidated, so a replaced photo is
/// never hidden behind an `immutable` answer (a browser showed the old photo for a year).
@Suite struct VersionedURLTests {
    static let immutable = "public, max-age=31536000, immutable"
    static let revalidate = "public, no-cache"
    /// 1800x1200: 393x393 at grid 3, 1179x786 at grid 1.
    static let photoA = Paths.fixturePhotos + "/Landscape_1.jpg"
    /// 311x450 stored, orientation 6 (450x311 shown): a centre square of 311 at grid 3.
    static let photoB = Paths.fixturePhotos + "/sony-cybershot-small-orientation6.jpg"

    /// A library of its own (names that need encoding), served on a socket; the index is
    /// rescanned only when a test says so.
    final class Library {
        let root = NSTemporaryDirectory() + "thumbd-versioned-\(UUID().uuidString)"
        let server: ServerHarness

        init(names: [String] = ["p.jpg"]) throws {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            for name in names {
                let path = root + "/" + name
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: VersionedURLTests.photoA, toPath: path)
            }
            server = try ServerHarness(library: root) { $0.indexRescanSeconds = 3600 }
            server.waitForInitialScan()
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(atPath: root)
        }

        /// Puts `photo` at `name` the way an editor saves: a new file renamed over the old.
        func replace(_ name: String, with photo: String) throws {
            let temporary = root + "/.incoming"
            try FileManager.default.copyItem(atPath: photo, toPath: temporary)
            #expect(rename(temporary, root + "/" + name) == 0)
        }

        /// `/assets` items by path.
        func items() throws -> [String: [String: Any]] {
            let page = try server.get("/assets")
            #expect(page.status == 200)
            let items = page.json["items"] as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: items.map { ($0["path"] as? String ?? "", $0) })
        }

        /// The URL of `path` at `grid` from `/assets`.
        func listedURL(_ path: String, grid: String = "3") throws -> String {
            let item = try #require(try items()[path], "\(path) is not listed")
            let thumbnails = try #require(item["thumbnails"] as? [String: String], "no thumbnails in \(item)")
            return try #require(thumbnails[grid], "no grid \(grid) in \(thumbnails)")
        }
    }

    /// Every URL `/assets` lists answers 200 with the long lifetime, at every grid, for names
    /// that need percent-encoding (space, `+`, `%`, `#`, `?`, Korean, emoji, a directory).
    @Test func listedURLsWorkAndAreImmutable() throws {
        let names = ["plain.jpg", "a b+c.jpg", "100%#?.jpg", "사진/한글 🌅.jpg"]
        let lib = try Library(names: names)
        let items = try lib.items()
        #expect(items.count == names.count)
        let expected = ["1": ImageHeader(format: "jpeg", width: 1179, height: 786),
                        "3": ImageHeader(format: "jpeg", width: 393, height: 393),
                        "5": ImageHeader(format: "jpeg", width: 236, height: 236)]
        for name in names {
            let thumbnails = try #require(items[name]?["thumbnails"] as? [String: String], "\(name): \(String(describing: items[name]))")
            #expect(Set(thumbnails.keys) == ["1", "3", "5"])
            for (grid, url) in thumbnails {
                #expect(url.hasPrefix("/thumbnails/\(grid)/" + encodePath(name) + "?v="), "\(url)")
                let response = try lib.server.get(url)
                #expect(response.status == 200, "\(url)")
                #expect(response.image == expected[grid], "\(url)")
                #expect(response.header("Cache-Control") == Self.immutable, "\(url)")
                #expect(response.header("Vary") == "Accept")
                // The same URL again (a memory hit, headers prepared once per URL) and as a HEAD.
                #expect(try lib.server.get(url).header("Cache-Control") == Self.immutable)
                let head = try lib.server.get(url, method: "HEAD")
                #expect(head.status == 200 && head.header("Cache-Control") == Self.immutable)
                #expect(head.header("ETag") == response.header("ETag"))
            }
        }
    }

    /// `?v=` picks headers only: the versioned and the bare URL are one cache entry (one render,
    /// one ETag, the same bytes), and `?format=` or `Accept` combine with `v` as usual.
    @Test func theVersionChangesHeadersNotTheThumbnail() throws {
        let lib = try Library()
        let versioned = try lib.listedURL("p.jpg")
        let bare = String(versioned.prefix { $0 != "?" })
        let first = try lib.server.get(versioned)
        #expect(first.header("X-Cache") == "MISS")
        let plain = try lib.server.get(bare)
        #expect(plain.header("X-Cache") == "HIT-MEMORY")
        #expect(plain.header("Cache-Control") == Self.revalidate)
        #expect(plain.bodyDigest == first.bodyDigest)
        #expect(plain.header("ETag") == first.header("ETag"))
        #expect(try lib.server.stat("renders", "total") == 1)
        let forced = try lib.server.get(versioned + "&format=webp")
        #expect(forced.image?.format == "webp")
        #expect(forced.header("Cache-Control") == Self.immutable)
        let ordered = try lib.server.get(bare + "?format=webp&" + versioned.drop { $0 != "?" }.dropFirst())
        #expect(ordered.header("Cache-Control") == Self.immutable)
        #expect(ordered.header("X-Cache") == "HIT-MEMORY")
        let accepted = try lib.server.get(versioned, headers: ["Accept": "image/webp,*/*"])
        #expect(accepted.image?.format == "webp")
        #expect(accepted.header("Cache-Control") == Self.immutable)
        #expect(accepted.header("Vary") == "Accept")
        #expect(try lib.server.get(bare + "?format=webp").header("Cache-Control") == Self.revalidate)
    }

    /// A bare path URL stays the same when the photo changes: `no-cache` with the ETag, and a
    /// revalidation with `If-None-Match` is a `304` carrying the same policy.
    @Test func aBareURLIsRevalidatedWith304s() throws {
        let lib = try Library()
        for target in ["/thumbnails/3/p.jpg", "/thumbnails/3/p.jpg?format=png"] {
            let response = try lib.server.get(target)
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == Self.revalidate, "\(target)")
            let etag = try #require(response.header("ETag"))
            let again = try lib.server.get(target, headers: ["If-None-Match": etag])
            #expect(again.status == 304, "\(target)")
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            #expect(again.header("Cache-Control") == Self.revalidate)
        }
    }

    /// A `v` that is not the source's current version never gets the long lifetime: made up,
    /// empty, encoded, or that of a photo since replaced, which answers the new photo's
    /// thumbnail (not a redirect) to be revalidated; the listing then gives a new URL that
    /// is immutable again.
    @Test func aStaleVersionGetsTheCurrentThumbnailWithoutTheLongLifetime() throws {
        let lib = try Library()
        let old = try lib.listedURL("p.jpg")
        let before = try lib.server.get(old)
        #expect(before.image == ImageHeader(format: "jpeg", width: 393, height: 393))
        #expect(before.header("Cache-Control") == Self.immutable)
        let token = String(old.drop { $0 != "=" }.dropFirst())
        for wrong in ["?v=0000000000000000", "?v=", "?v", "?v=" + token.uppercased(), "?v=" + token + "0",
                      "?v=%" + String(format: "%02X", token.utf8.first!) + token.dropFirst(), "?format=jpeg&v=" + token.dropLast()] {
            let response = try lib.server.get("/thumbnails/3/p.jpg" + wrong)
            #expect(response.status == 200, "\(wrong)")
            #expect(response.header("Cache-Control") == Self.revalidate, "\(wrong)")
        }

        try lib.replace("p.jpg", with: Self.photoB)
        let stale = try lib.server.get(old)   // the listing has not been rescanned yet
        #expect(stale.status == 200)
        #expect(stale.image == ImageHeader(format: "jpeg", width: 311, height: 311))
        #expect(stale.header("Cache-Control") == Self.revalidate)
        #expect(stale.header("ETag") != before.header("ETag"))
        let staleAgain = try lib.server.get(old, headers: ["If-None-Match": before.header("ETag") ?? ""])
        #expect(staleAgain.status == 200)   // the old ETag no longer matches
        #expect(staleAgain.header("Cache-Control") == Self.revalidate)

        _ = lib.server.thumbd.service.index.rescan()
        let new = try lib.listedURL("p.jpg")
        #expect(new != old)
        #expect(new.prefix { $0 != "?" } == old.prefix { $0 != "?" })
        let current = try lib.server.get(new)
        #expect(current.image == ImageHeader(format: "jpeg", width: 311, height: 311))
        #expect(current.header("Cache-Control") == Self.immutable)
        #expect(current.header("ETag") == stale.header("ETag"))
        let notModified = try lib.server.get(new, headers: ["If-None-Match": current.header("ETag") ?? ""])
        #expect(notModified.status == 304)
        #expect(notModified.header("Cache-Control") == Self.immutable)
    }

    /// A prefetch warms exactly what the listed URL reads: the versioned GET is a disk hit and
    /// runs no render of its own.
    @Test func aPrefetchWarmsWhatTheVersionedURLReads() throws {
        let lib = try Library()
        let body = #"{"grid": "5", "paths": ["p.jpg"]}"#
        let request = "POST /prefetch HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let job = try TestClient.parse(TestClient.exchange(port: lib.server.port, Array(request.utf8)))
        #expect(job.status == 202)
        let deadline = Date().addingTimeInterval(30)
        while try lib.server.stat("prefetch", "done") < 1 && Date() < deadline { usleep(20_000) }
        let response = try lib.server.get(try lib.listedURL("p.jpg", grid: "5"))
        #expect(response.header("X-Cache") == "HIT-DISK")
        #expect(response.header("Cache-Control") == Self.immutable)
        #expect(try lib.server.stat("renders", "total") == 1)
    }

    /// `cache_control` is the versioned policy and `cache_control_unversioned` the other.
    @Test func bothPoliciesAreConfigurable() throws {
        let root = NSTemporaryDirectory() + "thumbd-policies-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.copyItem(atPath: Self.photoA, toPath: root + "/p.jpg")
        let server = try ServerHarness(library: root) {
            $0.cacheControl = "public, max-age=86400"
            $0.cacheControlUnversioned = "public, max-age=60"
        }
        server.waitForInitialScan()
        let items = try server.get("/assets").json["items"] as? [[String: Any]] ?? []
        let url = try #require((items.first?["thumbnails"] as? [String: String])?["3"])
        #expect(try server.get(url).header("Cache-Control") == "public, max-age=86400")
        #expect(try server.get("/thumbnails/3/p.jpg").header("Cache-Control") == "public, max-age=60")
    }

    /// The token: the same for the same source, spec and quality; new for any of them changed.
    @Test func theTokenFollowsSourceSpecAndQuality() {
        let spec = GridSpec.defaults[1]
        let source = SourceIdentity(size: 1000, modifiedNanoseconds: 1_700_000_000_123_456_789)
        let token = ThumbnailVersion(spec: spec, quality: 80).token(for: source)
        #expect(token.count == 16 && token.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(ThumbnailVersion(spec: spec, quality: 80).token(for: source) == token)
        var other = source
        other.modifiedNanoseconds += 1
        #expect(ThumbnailVersion(spec: spec, quality: 80).token(for: other) != token)
        other = source
        other.size += 1
        #expect(ThumbnailVersion(spec: spec, quality: 80).token(for: other) != token)
        #expect(ThumbnailVersion(spec: spec, quality: 81).token(for: source) != token)
        var wider = spec
        wider.width += 1
        #expect(ThumbnailVersion(spec: wider, quality: 80).token(for: source) != token)
    }

    /// The query of a thumbnail URL: `v` read as sent, `format` as before, in any order.
    @Test(arguments: [
        ("v=abc", "abc", FormatChoice.automatic),
        ("v=abc&format=png", "abc", .png),
        ("format=png&v=abc", "abc", .png),
        ("v=", "", .automatic),
        ("v", "", .automatic),
        ("&&v=a%62c&", "a%62c", .automatic),
        ("exp=1&kid=k&sig=s&v=abc", "abc", .automatic),
    ] as [(String, String?, FormatChoice)])
    func theQueryOfAThumbnailURL(query: String, version: String?, format: FormatChoice) throws {
        let parsed = try Negotiation.thumbnailQuery(Substring(query), accept: [], webpEnabled: true)
        #expect(parsed.version.map { String(Substring($0)) } == version)
        #expect(parsed.format == format)
    }

    /// A parameter a thumbnail URL does not take is refused, not ignored, and so is one given
    /// twice (it was read as its first value) (`QueryParameters.check`).
    @Test(arguments: ["vx=abc", "x=1", "v=abc&width=100", "v=abc&v=def", "v=abc&format=png&format=png"])
    func anUnknownParameterOfAThumbnailURLIsRefused(query: String) {
        #expect(throws: APIError.self) { try Negotiation.thumbnailQuery(Substring(query), accept: [], webpEnabled: true) }
    }
}
