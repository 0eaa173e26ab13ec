import Foundation
import HTTP
import Testing
import TestSupport
@testable import ThumbServer

/// Cross-origin access (`cors_origins`; README, "Cross-origin access"), by the Fetch standard's
/// CORS protocol, and `OPTIONS` (RFC 9110 §9.3.7), driven through `ThumbService.respond`.
@Suite struct CORSTests {
    final class Service: InProcessServer, @unchecked Sendable {
        init(origins: [String], adminToken: String = "", configure: (inout Config) -> Void = { _ in }) throws {
            try super.init { config in
                config.corsOrigins = origins
                config.adminToken = adminToken
                configure(&config)
            }
        }

        func respond(_ method: String, _ target: String, _ headers: [(String, String)] = []) -> HTTPResponse {
            respond(method, target, headers: headers)
        }
    }

    static let app = "https://photos.example.com"
    static let thumbnail = "/thumbnails/3/Landscape_1.jpg"
    /// What a browser sends before a `fetch()` with `If-None-Match` from another origin.
    static let preflight = [("Origin", app), ("Access-Control-Request-Method", "GET"),
                            ("Access-Control-Request-Headers", "if-none-match")]

    /// Every `Access-Control-*` field of `response`, by name.
    func cors(_ response: HTTPResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for name in ["Allow-Origin", "Allow-Methods", "Allow-Headers", "Max-Age", "Expose-Headers", "Allow-Credentials"] {
            if let value = response.headers["Access-Control-" + name] { fields[name] = value }
        }
        return fields
    }

    /// Off by default: no CORS header anywhere, but `OPTIONS` is answered (it was 405, and
    /// `OPTIONS *` 404).
    @Test func offByDefaultYetOptionsIsAnswered() throws {
        let service = try Service(origins: [])
        for target in [Self.thumbnail, "/assets", "/healthz"] {
            let get = service.respond("GET", target, [("Origin", Self.app)])
            #expect(cors(get) == [:], "\(target)")
            #expect(get.headers.values("Vary").contains("Origin") == false, "\(target)")
            let options = service.respond("OPTIONS", target, Self.preflight)
            #expect(options.status == 204, "\(target)")
            #expect(options.headers["Allow"] == "GET, HEAD, OPTIONS", "\(target)")
            #expect(cors(options) == [:], "\(target)")
        }
        #expect(service.respond("OPTIONS", "/prefetch").headers["Allow"] == "POST, DELETE, OPTIONS")
        let server = service.respond("OPTIONS", "*")
        #expect(server.status == 204)
        #expect(server.headers["Allow"] == "GET, HEAD, POST, DELETE, OPTIONS")
        #expect(server.body.isEmpty)
    }

    /// `*`: every public response says `*`, with or without an `Origin`, and depends on no
    /// request field, so it carries no `Vary: Origin`; a preflight is answered for GET/HEAD
    /// and the headers a grid client sends.
    @Test func anyOriginIsAStarOnEveryPublicResponse() throws {
        let service = try Service(origins: ["*"])
        let exposed = ["Allow-Origin": "*", "Expose-Headers": "ETag, X-Cache, Server-Timing, Retry-After"]
        let miss = service.respond("GET", Self.thumbnail, [("Origin", Self.app)])
        #expect(miss.status == 200 && miss.headers["X-Cache"] == "MISS")
        #expect(cors(miss) == exposed)
        #expect(miss.headers.values("Vary") == ["Accept"])
        let hit = service.respond("GET", Self.thumbnail, [("Origin", "http://localhost:5173")])
        #expect(hit.headers["X-Cache"] == "HIT-MEMORY")
        #expect(cors(hit) == exposed)
        let etag = try #require(hit.headers["ETag"])
        let notModified = service.respond("GET", Self.thumbnail, [("Origin", Self.app), ("If-None-Match", etag)])
        #expect(notModified.status == 304 && cors(notModified) == exposed)
        #expect(cors(service.respond("GET", "/assets")) == exposed)   // no Origin: the same answer
        let missing = service.respond("GET", "/thumbnails/3/nope.jpg", [("Origin", Self.app)])
        #expect(missing.status == 404 && cors(missing) == exposed)   // the app may read why

        let preflight = service.respond("OPTIONS", Self.thumbnail, Self.preflight)
        #expect(preflight.status == 204)
        #expect(preflight.headers["Allow"] == "GET, HEAD, OPTIONS")
        #expect(cors(preflight) == ["Allow-Origin": "*", "Allow-Methods": "GET, HEAD",
                                    "Allow-Headers": "Accept, If-None-Match, Authorization", "Max-Age": "7200"])
        #expect(preflight.body.isEmpty)
    }

    /// A list: the request's `Origin` echoed when it is listed, nothing when not, and
    /// `Vary: Origin` on every public response (cached for one origin, it must not serve another).
    @Test func listedOriginsAreEchoedAndVaryOnOrigin() throws {
        let service = try Service(origins: [Self.app, "http://localhost:5173"])
        let listed = service.respond("GET", Self.thumbnail, [("Origin", "http://localhost:5173")])
        #expect(listed.status == 200)
        #expect(cors(listed) == ["Allow-Origin": "http://localhost:5173", "Expose-Headers": "ETag, X-Cache, Server-Timing, Retry-After"])
        #expect(listed.headers.values("Vary") == ["Accept", "Origin"])
        for origin in ["https://evil.example", "https://photos.example.com.evil.example", "null", "HTTPS://PHOTOS.EXAMPLE.COM"] {
            let other = service.respond("GET", Self.thumbnail, [("Origin", origin)])
            #expect(other.status == 200, "\(origin)")
            #expect(cors(other) == [:], "\(origin)")
            #expect(other.headers.values("Vary") == ["Accept", "Origin"], "\(origin)")
        }
        let sameOrigin = service.respond("GET", "/assets")
        #expect(cors(sameOrigin) == [:])
        #expect(sameOrigin.headers.values("Vary") == ["Origin"])
        let preflight = service.respond("OPTIONS", "/assets", Self.preflight)
        #expect(preflight.status == 204)
        #expect(cors(preflight) == ["Allow-Origin": Self.app, "Allow-Methods": "GET, HEAD",
                                    "Allow-Headers": "Accept, If-None-Match, Authorization", "Max-Age": "7200"])
        #expect(preflight.headers.values("Vary") == ["Origin"])
        let refused = service.respond("OPTIONS", "/assets", [("Origin", "https://evil.example"),
                                                             ("Access-Control-Request-Method", "GET")])
        #expect(refused.status == 204 && cors(refused) == [:])
    }

    /// A refusal or an error of an opened route carries the same CORS headers as its 200 (issue
    /// 31): a web app whose client key expired reads 401 `key_expired` and asks its user to sign in
    /// again, where without `Access-Control-Allow-Origin` the browser gives the script a network
    /// error. Listed origins: the allowed one echoed, `Vary: Origin` on every answer; `*`: a star.
    @Test(arguments: [[Self.app, "http://localhost:5173"], ["*"]])
    func refusalsAndErrorsOfAnOpenedRouteCarryThem(origins: [String]) throws {
        let signingKey = "k1:" + String(repeating: "4f2a", count: 16)
        let service = try Service(origins: origins) { config in
            config.clientKeys = [ClientKeyTests.alice, ClientKeyTests.bob]   // bob's expired in 2023
            config.signingKeys = [signingKey]
        }
        let listed = origins != ["*"]
        let allowed = ["Allow-Origin": listed ? Self.app : "*", "Expose-Headers": "ETag, X-Cache, Server-Timing, Retry-After"]
        let origin = ("Origin", Self.app)
        let expired = 1_700_000_000   // 2023-11-14
        let expiredSignature = URLSigning.query(key: URLSigning.Key(id: "k1", secret: Crypto.bytes(hex: String(signingKey.dropFirst(3)))!),
                                                grid: Array("3".utf8), path: Array("Landscape_1.jpg".utf8), expires: expired)
        let cases: [(String, String, [(String, String)], Int, String)] = [
            ("GET", "/assets", [origin], 401, "unauthorized"),
            ("GET", "/assets", [origin, ("Authorization", "Bearer not-a-key")], 401, "unauthorized"),
            ("GET", "/assets", [origin, ("Authorization", "Bearer bob-phone-key")], 401, "key_expired"),
            ("HEAD", "/assets", [origin, ("Authorization", "Bearer bob-phone-key")], 401, "key_expired"),
            ("GET", "/assets", [origin, ("Authorization", "Bearer alice-phone-key"), ("Thumbd-Client-Id", "not an id")], 400, "bad_request"),
            ("GET", "/assets?limit=-1", [origin, ("Authorization", "Bearer alice-phone-key")], 400, "bad_request"),
            ("POST", "/assets", [origin, ("Authorization", "Bearer alice-phone-key")], 405, "method_not_allowed"),
            ("GET", Self.thumbnail, [origin], 403, "signature_required"),
            ("GET", Self.thumbnail + "?" + expiredSignature, [origin], 403, "signature_expired"),
            ("GET", "/thumbnails/3/no-such-photo.jpg?" + URLSigning.query(
                key: URLSigning.Key(id: "k1", secret: Crypto.bytes(hex: String(signingKey.dropFirst(3)))!), grid: Array("3".utf8),
                path: Array("no-such-photo.jpg".utf8), expires: Int(Date().timeIntervalSince1970) + 600), [origin], 404, "not_found"),
        ]
        for (method, target, headers, status, code) in cases {
            let response = service.respond(method, target, headers)
            let what = "\(method) \(target) \(headers.dropFirst().map(\.1))"
            #expect(response.status == status, "\(what)")
            if method != "HEAD" {
                let json = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
                #expect(json?["error"] as? String == code, "\(what)")
            }
            #expect(cors(response) == allowed, "\(what)")
            #expect(response.headers.values("Vary").filter { $0 == "Origin" }.count == (listed ? 1 : 0), "\(what)")
        }
        // An origin not listed still gets `Vary: Origin` on a refusal, and no CORS header.
        if listed {
            let other = service.respond("GET", "/assets", [("Origin", "https://evil.example")])
            #expect(other.status == 401 && cors(other) == [:])
            #expect(other.headers.values("Vary") == ["Origin"])
        }
    }

    /// What needs `admin_token` (`/stats`, `/metrics`, `/prefetch…`) is never opened, token or
    /// not: no CORS header, so a page elsewhere can neither read it nor get a preflight that
    /// lets it send `Authorization`.
    @Test(arguments: ["", "s3cret"])
    func adminRoutesAreNeverOpened(adminToken: String) throws {
        let service = try Service(origins: ["*"], adminToken: adminToken)
        let origin = [("Origin", Self.app)]
        for (method, target) in [("GET", "/stats"), ("GET", "/metrics"), ("POST", "/prefetch"), ("DELETE", "/prefetch"),
                                 ("GET", "/prefetch/1"), ("DELETE", "/prefetch/1"), ("OPTIONS", "/stats"),
                                 ("OPTIONS", "/prefetch"), ("OPTIONS", "/prefetch/1")] {
            let response = service.respond(method, target, method == "OPTIONS" ? Self.preflight : origin)
            #expect(cors(response) == [:], "\(method) \(target)")
            #expect(response.headers.values("Vary").contains("Origin") == false, "\(method) \(target)")
            if method == "OPTIONS" {
                // A preflight carries no credentials: with a token set, these are 401.
                #expect(response.status == (adminToken.isEmpty ? 204 : 401), "\(method) \(target)")
            }
        }
    }

    /// `cors_origins` is read like every key (file, `THUMBD_CORS_ORIGINS`, `--cors-origins`), and
    /// refused at start, with one sentence naming it, when an origin could never match what a
    /// browser sends.
    @Test func theSettingIsReadAndCheckedLikeEveryKey() throws {
        func load(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigError) -> [String] {
            guard case .run(let config) = try ConfigLoader.load(arguments: ["--library", "/p"] + arguments,
                                                                environment: environment) else { return ["help?"] }
            return config.corsOrigins
        }
        let file = NSTemporaryDirectory() + "thumbd-cors-\(UUID().uuidString).json"
        try Data(#"{"cors_origins": ["https://a.example", "http://localhost:5173"]}"#.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try load(["--config", file]) == ["https://a.example", "http://localhost:5173"])
        #expect(try load([], ["THUMBD_CORS_ORIGINS": "https://b.example, capacitor://localhost"])
                == ["https://b.example", "capacitor://localhost"])
        #expect(try load(["--cors-origins", "*"]) == ["*"])
        #expect(try load([]) == [])
        for bad in ["*,https://a.example", "https://a.example/", "HTTPS://a.example", "https://A.example", "null",
                    "https://a.example:443", "http://a.example:80", "a.example", "https://a.example/gallery",
                    "https://a.example:99999", "https://"] {
            #expect(throws: ConfigError.self, "\(bad)") { try load(["--cors-origins", bad]) }
            do {
                _ = try load(["--cors-origins", bad])
            } catch {
                #expect(error.description.contains("cors_origins"), "\(bad): \(error)")
            }
        }
        try Data(#"{"cors_origins": [1]}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: ConfigError.self) { try load(["--config", file]) }
        #expect(try load(["--cors-origins", "http://[::1]:8081,http://127.0.0.1:3000"]) == ["http://[::1]:8081", "http://127.0.0.1:3000"])
    }

    /// Over a socket: `OPTIONS *` and a preflight as a browser sends them, 204 without a body
    /// or `Content-Length` (RFC 9110 §8.6), and the connection kept for the next request.
    @Test func overTheSocketAsABrowserSendsThem() throws {
        let server = try ServerHarness { $0.corsOrigins = [Self.app] }
        let client = try KeepAliveClient(port: server.port)
        let star = try client.request("*", method: "OPTIONS")
        #expect(star.status == 204 && star.header("Allow") == "GET, HEAD, POST, DELETE, OPTIONS")
        #expect(star.header("Content-Length") == nil)
        let preflight = try client.request(Self.thumbnail, method: "OPTIONS", headers: Dictionary(uniqueKeysWithValues: Self.preflight))
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == Self.app)
        #expect(preflight.header("Access-Control-Allow-Headers") == "Accept, If-None-Match, Authorization")
        let get = try client.request(Self.thumbnail, headers: ["Origin": Self.app])
        #expect(get.status == 200 && get.header("Access-Control-Allow-Origin") == Self.app)
        #expect(get.image == ImageHeader(format: "jpeg", width: 393, height: 393))
    }
}
