import Foundation
import Testing
import TestSupport
@testable import ThumbServer

/// Signed URLs under attack: every way a signature can be wrong is a 403 with a clear JSON error
/// that is the same whether the path exists or not, and costs no disk access.
@Suite struct SignatureHostileInputTests {
    static let secret = [UInt8](repeating: 0x7e, count: 32)
    static let key = URLSigning.Key(id: "live", secret: secret)
    static let stranger = URLSigning.Key(id: "live", secret: [UInt8](repeating: 0x7f, count: 32))   // right id, wrong secret

    static func server() throws -> ServerHarness {
        try ServerHarness { config in
            config.signingKeys = ["live:" + Crypto.hex(secret)]
            config.signedURLMaxSeconds = 86_400
        }
    }

    static func url(grid: String = "3", path: String, signedGrid: String? = nil, signedPath: String? = nil,
                    key: URLSigning.Key = key, expires: Int) -> String {
        let sig = URLSigning.signature(key: key, grid: Array((signedGrid ?? grid).utf8), path: Array((signedPath ?? path).utf8),
                                       expires: expires)
        return "/thumbnails/\(grid)/\(path)?exp=\(expires)&kid=\(key.id)&sig=\(sig)"
    }

    @Test func eachBadSignatureIs403WithItsOwnError() throws {
        let server = try Self.server()
        let now = Int(Date().timeIntervalSince1970)
        #expect(try server.get(Self.url(path: "Landscape_1.jpg", expires: now + 600)).status == 200)
        // Each case as a URL for photo `p` (the path is also what the bad URL was signed for).
        let cases: [(String, (String) -> String, String)] = [
            ("expired", { Self.url(path: $0, expires: now - 5) }, "signature_expired"),
            ("too far ahead", { Self.url(path: $0, expires: now + 86_400 + 3600) }, "expiry_too_far"),
            ("truncated", { String(Self.url(path: $0, expires: now + 600).dropLast(2)) }, "signature_invalid"),
            ("wrong key", { Self.url(path: $0, key: Self.stranger, expires: now + 600) }, "signature_invalid"),
            ("unknown key id", { Self.url(path: $0, expires: now + 600).replacingOccurrences(of: "kid=live", with: "kid=old") },
             "signature_invalid"),
            ("wrong grid", { Self.url(grid: "5", path: $0, signedGrid: "3", expires: now + 600) }, "signature_invalid"),
            ("another path's", { Self.url(path: $0, signedPath: "Landscape_6.jpg", expires: now + 600) }, "signature_invalid"),
            ("exp moved", { Self.url(path: $0, expires: now + 600).replacingOccurrences(of: "exp=\(now + 600)", with: "exp=\(now + 700)") },
             "signature_invalid"),
            ("exp not a number", { Self.url(path: $0, expires: now + 600).replacingOccurrences(of: "exp=\(now + 600)", with: "exp=soon") },
             "signature_invalid"),
            ("no sig", { let url = Self.url(path: $0, expires: now + 600); return String(url[..<url.range(of: "&sig=")!.lowerBound]) },
             "signature_invalid"),
            ("sig not base64url", { Self.url(path: $0, expires: now + 600) + "==" }, "signature_invalid"),
            ("unsigned", { "/thumbnails/3/" + $0 }, "signature_required"),
        ]
        for (what, target, code) in cases {
            let response = try server.get(target("Landscape_1.jpg"))
            #expect(response.status == 403, "\(what)")
            #expect(response.header("Content-Type") == "application/json" && response.header("Cache-Control") == "no-store", "\(what)")
            #expect(response.json["error"] as? String == code, "\(what)")
            #expect((response.json["message"] as? String)?.isEmpty == false, "\(what)")
            // The same answer for a path that does not exist: a refusal tells nothing of the disk.
            let missing = try server.get(target("Nothing_1.jpg"))
            #expect(missing.status == 403 && missing.body == response.body, "\(what)")
        }
    }

    @Test func aFloodOfBadSignaturesTouchesNothing() throws {
        let server = try Self.server()
        server.waitForInitialScan()
        let now = Int(Date().timeIntervalSince1970)
        #expect(try server.get(Self.url(path: "Landscape_1.jpg", expires: now + 600)).status == 200)
        // The render's disk write ends after its response: wait for it, so nothing moves below.
        #expect(try eventually { try server.stat("disk_cache", "entries") == 1 })
        let before = try server.stats()
        let client = try KeepAliveClient(port: server.port)
        let names = ["Landscape_1.jpg", "Landscape_6.jpg", "missing.jpg", "dir/deeper/none.jpg", "..%2F..%2Fetc%2Fpasswd"]
        let flood = 2000
        for i in 0..<flood {
            let name = names[i % names.count]
            let target = Self.url(path: name, key: Self.stranger, expires: now + 600 + i)
            let response = try client.request(target)
            #expect(response.status == 403)
        }
        let after = try server.stats()
        for (section, fields) in [("library", ["header_reads", "source_checks", "assets"]),
                                  ("memory_cache", ["hits", "misses", "entries"]),
                                  ("disk_cache", ["hits", "misses", "entries"]),
                                  ("renders", ["total", "failed", "known_failures"])] {
            for field in fields {
                let was = (before[section] as? [String: Any])?[field] as? Int
                let now = (after[section] as? [String: Any])?[field] as? Int
                #expect(was != nil && was == now, "\(section).\(field) moved from \(String(describing: was)) to \(String(describing: now))")
            }
        }
        let statuses = try #require((after["requests"] as? [String: Any])?["by_status"] as? [String: Int])
        #expect(statuses["403"] == flood)
    }
}
