import Foundation
import HTTP
import Testing
@testable import ThumbServer

/// A signed thumbnail URL is never fresh past its `exp` (issue 31; docs/API.md, "Thumbnails"):
/// `ServiceConfiguration.thumbnailCacheControl`, by a table with the time passed in, and through
/// the routes with no socket, on every answer a cache stores (miss, hit, HEAD, 304).
@Suite struct SignedURLCachingTests {
    static let key = URLSigning.Key(id: "k1", secret: Crypto.bytes(hex: String(repeating: "4f2a", count: 16))!)
    static let year = "public, max-age=31536000, immutable"

    /// The policy of a signed URL with `seconds` left, for each configured policy: worked out by
    /// hand from RFC 9111 §5.2.2 and RFC 5861.
    @Test func aPolicyIsFreshForAtMostTheSecondsLeft() {
        let table: [(policy: String, seconds: Int, expected: String)] = [
            (Self.year, 3600, "public, max-age=3600, immutable"),
            (Self.year, 10, "public, max-age=10, immutable"),
            (Self.year, 0, "public, max-age=0, immutable"),
            ("public, max-age=60", 3600, "public, max-age=60"),            // already shorter: kept
            ("public, no-cache", 3600, "public, no-cache"),                // revalidates every time
            ("no-store", 3600, "no-store"),
            ("private", 3600, "private, max-age=3600"),                    // no heuristic freshness past exp
            ("", 3600, "max-age=3600"),
            ("public, Max-Age=86400, S-MAXAGE=604800", 3600, "public, max-age=3600, s-maxage=3600"),
            ("public,max-age=\"86400\"", 120, "public,max-age=120"),       // the quoted-string form
            ("public, max-age=99999999999999999999", 120, "public, max-age=120"),
            ("public, max-age=600, stale-while-revalidate=86400, stale-if-error=86400", 3600, "public, max-age=600"),
            ("public, no-cache=\"Set-Cookie\"", 3600, "public, no-cache=\"Set-Cookie\", max-age=3600"),
        ]
        for row in table {
            #expect(ServiceConfiguration.cacheControl(row.policy, freshForAtMost: row.seconds) == row.expected, "\(row.policy)")
        }
        var configuration = ServiceConfiguration()
        configuration.cacheControl = Self.year
        let now = 1_780_000_000
        #expect(configuration.thumbnailCacheControl(versioned: true, signedUntil: nil, now: now) == Self.year)
        #expect(configuration.thumbnailCacheControl(versioned: false, signedUntil: nil, now: now) == "public, no-cache")
        #expect(configuration.thumbnailCacheControl(versioned: true, signedUntil: now + 3600, now: now) == "public, max-age=3600, immutable")
        #expect(configuration.thumbnailCacheControl(versioned: false, signedUntil: now + 3600, now: now) == "public, no-cache")
        // Sent after `exp` (a render that outlived the URL): fresh for no time, never negative.
        #expect(configuration.thumbnailCacheControl(versioned: true, signedUntil: now - 5, now: now) == "public, max-age=0, immutable")
    }

    final class Service: InProcessServer, @unchecked Sendable {
        init(signed: Bool) throws {
            try super.init { config in
                config.signingKeys = signed ? ["k1:" + String(repeating: "4f2a", count: 16)] : []
            }
        }

        /// The URL of `Landscape_1.jpg` at grid 3 as `/assets` lists it, once the first scan is done.
        func listedURL() throws -> String {
            let deadline = Date().addingTimeInterval(30)
            var listing = respond("GET", "/assets?limit=10000")
            while listing.status == 503 && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                listing = respond("GET", "/assets?limit=10000")
            }
            try #require(listing.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(listing.body)) as? [String: Any])
            let items = try #require(json["items"] as? [[String: Any]])
            let item = try #require(items.first { $0["path"] as? String == "Landscape_1.jpg" })
            return try #require((item["thumbnails"] as? [String: String])?["3"])
        }
    }

    static func now() -> Int { Int(Date().timeIntervalSince1970) }

    /// N of exactly `public, max-age=N, immutable` (the default policy, capped); nil for any other value.
    static func maxAge(_ cacheControl: String?) -> Int? {
        guard let value = cacheControl, value.hasPrefix("public, max-age="), value.hasSuffix(", immutable") else { return nil }
        return Int(value.dropFirst("public, max-age=".count).dropLast(", immutable".count))
    }

    /// `url` (a listed one: `…?v=…&exp=…&kid=…&sig=…`) signed again until `expires`.
    static func resigned(_ url: String, until expires: Int) -> String {
        let v = url.split(separator: "?")[1].split(separator: "&").first { $0.hasPrefix("v=") }!
        return "/thumbnails/3/Landscape_1.jpg?\(v)&" + URLSigning.query(key: key, grid: Array("3".utf8),
                                                                        path: Array("Landscape_1.jpg".utf8), expires: expires)
    }

    /// The URL `/assets` lists, signed for one to two hours (`signed_url_bucket_seconds`), is
    /// fresh until its `exp` and no longer; so is the same URL signed for an hour or 10 s, on a
    /// miss, a hit, a HEAD and each kind of 304. `immutable` stays: true while fresh.
    @Test func aSignedURLIsFreshUntilItsExpAndNoLonger() throws {
        let service = try Service(signed: true)
        let listed = try service.listedURL()
        let exp = try #require(Int(listed.split(separator: "&").first { $0.hasPrefix("exp=") }!.dropFirst(4)))
        let before = Self.now()
        let miss = service.respond("GET", listed)
        let after = Self.now()
        #expect(miss.status == 200 && miss.headers["X-Cache"] == "MISS")
        let missAge = try #require(Self.maxAge(miss.headers["Cache-Control"]), "\(miss.headers["Cache-Control"] ?? "none")")
        #expect((exp - after)...(exp - before) ~= missAge)
        #expect(missAge <= 7200)
        let etag = try #require(miss.headers["ETag"])

        for (seconds, range) in [(3600, 3599...3600), (10, 9...10)] {
            let url = Self.resigned(listed, until: Self.now() + seconds)
            let answers = [("GET", [], 200), ("HEAD", [], 200), ("GET", [("If-None-Match", etag)], 304),
                           ("GET", [("If-None-Match", "*")], 304)]
            for (method, headers, status) in answers {
                let response = service.respond(method, url, headers: headers)
                #expect(response.status == status, "\(seconds) s, \(method) \(headers)")
                if status == 200 { #expect(response.headers["X-Cache"] == "HIT-MEMORY") }
                #expect(Self.maxAge(response.headers["Cache-Control"]).map(range.contains) == true,
                        "\(seconds) s, \(method) \(headers): \(response.headers["Cache-Control"] ?? "none")")
            }
        }
        // Signed without `v`: revalidated every time already, unchanged.
        let bare = "/thumbnails/3/Landscape_1.jpg?" + URLSigning.query(key: Self.key, grid: Array("3".utf8),
                                                                       path: Array("Landscape_1.jpg".utf8), expires: Self.now() + 3600)
        #expect(service.respond("GET", bare).headers["Cache-Control"] == "public, no-cache")
    }

    /// Without signing, the URL `/assets` lists keeps its year, on a miss and a hit alike.
    @Test func anUnsignedVersionedURLKeepsItsYear() throws {
        let service = try Service(signed: false)
        let listed = try service.listedURL()
        #expect(!listed.contains("exp="))
        for expected in ["MISS", "HIT-MEMORY"] {
            let response = service.respond("GET", listed)
            #expect(response.headers["X-Cache"] == expected)
            #expect(response.headers["Cache-Control"] == Self.year)
        }
    }
}
