import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// Client keys (README, "Deploying a private library"): bearer keys by SHA-256, each limited to a
/// folder of the library and a time; `/stats` and `/metrics` stay the admin token's.
@Suite struct ClientKeyTests {
    // `printf %s alice-phone-key | sha256sum`, `printf %s bob-phone-key | sha256sum`.
    static let alice = ClientKey(id: "alice-phone", sha256: Crypto.bytes(hex: "805df7cb96e8ea7f3c00ce18aa1488dca42d944ccf36cfff6d660df011b5e297")!,
                                 prefix: [Array("alice".utf8)])
    static let bob = ClientKey(id: "bob-phone", sha256: Crypto.bytes(hex: "bf361a2215eeb8ef8b6acbcf35f95a20cfc82da71ea174076ef6a105b998fa59")!,
                               prefix: [Array("bob".utf8)], expires: 1_700_000_000)   // 2023-11-14: expired

    /// alice/ holds two photos, bob/ one, and alicex/ one (a folder whose name starts with alice's).
    static func library() throws -> TemporaryDirectory {
        let root = TemporaryDirectory("thumbd-clientkeys")
        for (name, photo) in [("alice/a1.jpg", "Landscape_1.jpg"), ("alice/2024/a2.jpg", "kodak-dc210-1998-vga.jpg"),
                              ("bob/b1.jpg", "Landscape_6.jpg"), ("alicex/c.jpg", "galaxy-s-orientation6-gps-vga.jpg")] {
            root.write(name, Array(Fixtures.photo(photo)))
        }
        return root
    }

    static func server(_ library: TemporaryDirectory, configure: (inout Config) -> Void = { _ in }) throws -> ServerHarness {
        let server = try ServerHarness(library: library.path) { config in
            config.clientKeys = [alice, bob]
            config.adminToken = "the-admin-token"
            configure(&config)
        }
        server.waitForInitialScan()
        return server
    }

    static func bearer(_ key: String) -> [String: String] { ["Authorization": "Bearer \(key)"] }

    static func paths(_ listing: TestResponse) -> [String] {
        ((listing.json["items"] as? [[String: Any]]) ?? []).compactMap { $0["path"] as? String }.sorted()
    }

    /// A web app on another origin (`cors_origins`) lists its folder with its key: the preflight,
    /// which carries no credentials, is answered and allows `Authorization`; the GET is read.
    @Test func aWebAppOnAnotherOriginSendsItsKey() throws {
        let library = try Self.library()
        let app = "https://photos.example.com"
        let server = try Self.server(library) { $0.corsOrigins = [app] }
        let preflight = try server.get("/assets", headers: ["Origin": app, "Access-Control-Request-Method": "GET",
                                                            "Access-Control-Request-Headers": "authorization"], method: "OPTIONS")
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Origin") == app)
        #expect(preflight.header("Access-Control-Allow-Headers")?.contains("Authorization") == true)
        var headers = Self.bearer("alice-phone-key")
        headers["Origin"] = app
        let listing = try server.get("/assets", headers: headers)
        #expect(listing.status == 200 && listing.header("Access-Control-Allow-Origin") == app)
        #expect(Self.paths(listing) == ["alice/2024/a2.jpg", "alice/a1.jpg"])
    }

    @Test func aKeyListsOnlyItsFolder() throws {
        let library = try Self.library()
        let server = try Self.server(library)
        let none = try server.get("/assets")
        #expect(none.status == 401)
        #expect(none.header("WWW-Authenticate") == "Bearer realm=\"thumbd\"")
        #expect(try server.get("/assets", headers: Self.bearer("not-a-key")).status == 401)
        let alice = try server.get("/assets?sort=oldest", headers: Self.bearer("alice-phone-key"))
        #expect(alice.status == 200)
        #expect(Self.paths(alice) == ["alice/2024/a2.jpg", "alice/a1.jpg"])
        #expect(alice.json["total"] as? Int == 2)
        // Paging by cursor stays in the folder.
        let first = try server.get("/assets?limit=1", headers: Self.bearer("alice-phone-key")).json
        let next = try #require(first["next"] as? String)
        let second = try server.get("/assets?limit=1&after=\(next)", headers: Self.bearer("alice-phone-key"))
        #expect(second.json["total"] as? Int == 2 && second.json["offset"] as? Int == 1 && second.json["next"] is NSNull)
        // An expired key: 401 key_expired, whatever it asks for.
        let bob = try server.get("/assets", headers: Self.bearer("bob-phone-key"))
        #expect(bob.status == 401 && bob.json["error"] as? String == "key_expired")
        // The admin token sees all four.
        #expect(Self.paths(try server.get("/assets", headers: Self.bearer("the-admin-token"))).count == 4)
        // /stats and /metrics are not a client key's.
        #expect(try server.get("/stats", headers: Self.bearer("alice-phone-key")).status == 401)
        #expect(try server.get("/metrics", headers: Self.bearer("alice-phone-key")).status == 401)
        #expect(try server.get("/stats", headers: Self.bearer("the-admin-token")).status == 200)
    }

    @Test func aKeyPrefetchesOnlyUnderItsFolder() throws {
        let library = try Self.library()
        let server = try Self.server(library)
        func post(_ body: String, key: String = "alice-phone-key") throws -> TestResponse {
            try server.post("/prefetch", body, headers: Self.bearer(key))
        }
        for outside in ["bob/b1.jpg", "alicex/c.jpg", "alice", "bob/none.jpg"] {
            let refused = try post(#"{"grid": "5", "paths": ["alice/a1.jpg", "\#(outside)"]}"#)
            #expect(refused.status == 403, "\(outside)")
            #expect(refused.json["error"] as? String == "outside_prefix", "\(outside)")
        }
        #expect(try post(#"{"grid": "5", "urls": ["bob/b1.jpg"]}"#).status == 403)
        #expect(server.thumbd.service.prefetcher.statistics.jobs == 0)   // nothing was queued
        let accepted = try post(#"{"grid": "5", "paths": ["alice/a1.jpg"]}"#)
        #expect(accepted.status == 202 && accepted.json["total"] as? Int == 1)
        // A range is of the listing the key sees: its two photos.
        let range = try post(#"{"grid": "5", "start": 0, "end": 100}"#)
        #expect(range.status == 202 && range.json["total"] as? Int == 2)
        #expect(try post(#"{"grid": "5", "start": 0, "end": 100}"#, key: "").status == 401)
        // A link inside the folder that leads out of it counts as missing.
        #expect(symlink("../bob/b1.jpg", library.path + "/alice/peek.jpg") == 0)
        let peek = try post(#"{"grid": "5", "paths": ["alice/peek.jpg"]}"#)
        #expect(peek.status == 202 && peek.json["failed"] as? Int == 1)
    }

    @Test func listedURLsAreSignedWhenSigningIsOn() throws {
        let library = try Self.library()
        let secret = String(repeating: "5c", count: 32)
        let server = try Self.server(library) { $0.signingKeys = ["k1:" + secret] }
        let items = try #require(try server.get("/assets", headers: Self.bearer("alice-phone-key")).json["items"] as? [[String: Any]])
        #expect(items.count == 2)
        let urls = try #require(items.first?["thumbnails"] as? [String: String])
        let url = try #require(urls["3"])
        #expect(url.contains("&exp=") && url.contains("&kid=k1&sig="))
        let exp = try #require(Int(url.components(separatedBy: "&exp=")[1].prefix { $0.isNumber }))
        let now = Int(Date().timeIntervalSince1970)
        // One bucket (3600 s) from now, rounded up to a whole hour.
        #expect(exp % 3600 == 0 && exp > now + 3600 - 1 && exp <= now + 7200)
        let thumbnail = try server.get(url)
        #expect(thumbnail.status == 200 && thumbnail.image?.width == 393 && thumbnail.image?.height == 393)
        // The signature is for that path alone.
        let other = url.replacingOccurrences(of: items[0]["url"] as! String, with: items[1]["url"] as! String)
        #expect(try server.get(other).status == 403)
    }

    @Test func theConfigFileGivesKeysByTheirDigest() throws {
        let file = NSTemporaryDirectory() + "thumbd-keys-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        func load(_ keys: String) throws -> Config {
            try #require(FileManager.default.createFile(atPath: file, contents: Data(#"{"client_keys": \#(keys)}"#.utf8)))
            guard case .run(let config) = try ConfigLoader.load(arguments: ["--config", file, "--library", "/tmp"], environment: [:]) else {
                throw ConfigError("help")
            }
            return config
        }
        let digest = "805df7cb96e8ea7f3c00ce18aa1488dca42d944ccf36cfff6d660df011b5e297"
        let config = try load(#"[{"id": "alice-phone", "sha256": "\#(digest)", "prefix": "alice/", "expires": "2023-11-14T22:13:20Z"}]"#)
        #expect(config.clientKeys == [ClientKey(id: "alice-phone", sha256: Self.alice.sha256, prefix: [Array("alice".utf8)],
                                                expires: 1_700_000_000)])
        #expect(try load(#"[{"id": "a", "sha256": "\#(digest)"}]"#).clientKeys[0].prefix == [])
        for bad in [#"[{"id": "a", "sha256": "alice-phone-key"}]"#, #"[{"id": "a", "sha256": "\#(digest)", "prefix": "../x"}]"#,
                    #"[{"id": "a", "sha256": "\#(digest)", "expires": "tomorrow"}]"#, #"[{"id": "a", "key": "x"}]"#,
                    #"[{"id": "a", "sha256": "\#(digest)"}, {"id": "a", "sha256": "\#(digest)"}]"#, #"{"id": "a"}"#] {
            #expect(throws: ConfigError.self, "\(bad)") { try load(bad) }
        }
        // One key under two ids would reach the folder of whichever entry came last.
        #expect(throws: ConfigError("client keys 'a' and 'b' in \(file) have the same sha256: one key can have one prefix "
                                    + "and one expiry; give each client its own key")) {
            try load(#"[{"id": "a", "sha256": "\#(digest)", "prefix": "cameras"}, {"id": "b", "sha256": "\#(digest)"}]"#)
        }
    }
}
