import Foundation
import Testing
@testable import ThumbServer

/// Signed thumbnail URLs (README, "Deploying a private library"): the signature against
/// Python's `hmac` (Tests/Fixtures/signing/make_vector.py), `thumbd sign`, and a server that
/// serves signed URLs only, with the signature kept out of the cache key and the ETag.
@Suite struct URLSigningTests {
    static let secretHex = String(repeating: "4f2a", count: 16)
    static let key = URLSigning.Key(id: "2026-12", secret: Crypto.bytes(hex: secretHex)!)

    struct Vector {
        let keyID: String, secretHex: String, expires: Int
        let cases: [(grid: String, urlPath: String, signedPathHex: String, sig: String)]
    }

    static func vector() throws -> Vector {
        let data = try #require(FileManager.default.contents(atPath: Paths.packageRoot + "/Tests/Fixtures/signing/signing-vector.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]]).map {
            ($0["grid"] as! String, $0["url_path"] as! String, $0["signed_path_hex"] as! String, $0["sig"] as! String)
        }
        return Vector(keyID: root["key_id"] as! String, secretHex: root["secret_hex"] as! String,
                      expires: root["expires"] as! Int, cases: cases)
    }

    /// The signature Python's `hmac` gives (as Tests/Fixtures/signing/make_vector.py makes it), for
    /// a message the vector does not hold.
    static func signatureByPython(grid: String, path: String, expires: Int, secretHex: String) throws -> String {
        let program = "import base64, hashlib, hmac, sys; g, p, e, k = sys.argv[1:]; "
            + "print(base64.urlsafe_b64encode(hmac.new(bytes.fromhex(k), f'{g}\\n{p}\\n{e}'.encode(), hashlib.sha256).digest())"
            + ".rstrip(b'=').decode())"
        let out = try #require(try ReadmeSigningExampleTests.run("python3", ["-c", program, grid, path, String(expires), secretHex]))
        return out.trimmingCharacters(in: .newlines)
    }

    @Test func libcryptoAgreesWithRFC4231() {
        // RFC 4231 §4.2, test case 1: key 0x0b x 20, "Hi There".
        let mac = Crypto.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Crypto.hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // FIPS 180-4's "abc".
        #expect(Crypto.hex(Crypto.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Crypto.equal([1, 2, 3], [1, 2, 3]))
        #expect(!Crypto.equal([1, 2, 3], [1, 2, 4]))
        #expect(!Crypto.equal([1, 2, 3], [1, 2]))
    }

    @Test func signaturesMatchPythonsHMAC() throws {
        let vector = try Self.vector()
        #expect(vector.cases.count == 4)
        let key = URLSigning.Key(id: vector.keyID, secret: try #require(Crypto.bytes(hex: vector.secretHex)))
        for item in vector.cases {
            let segments = item.urlPath.split(separator: "/").map { PercentDecoding.decodeBytes($0)! }
            let path = URLSigning.canonicalPath(segments)
            #expect(Crypto.hex(path) == item.signedPathHex, "\(item.urlPath)")
            #expect(URLSigning.signature(key: key, grid: Array(item.grid.utf8), path: path, expires: vector.expires) == item.sig)
            // And the server's check accepts exactly that URL, while it lives.
            var signing = URLSigning()
            signing.keys = [key]
            let query = "exp=\(vector.expires)&kid=\(vector.keyID)&sig=\(item.sig)"
            #expect(signing.refusal(path: Substring("/thumbnails/\(item.grid)/\(item.urlPath)"), query: Substring(query),
                                    now: vector.expires - 60) == nil)
        }
    }

    @Test func signCommandRoundsTheExpiryUpToTheBucket() throws {
        let keys = "old:\(String(repeating: "11", count: 32)),\(Self.key.id):\(Self.secretHex)"
        // 2026-12-02T10:20:00Z + 1h = 11:20, rounded up to the hour: 12:00 = 1796198400.
        let now = 1_796_198_400 - 40 * 60 - 3600
        let url = try SignCommand.url(arguments: ["--grid", "3", "--path", "cameras/nikon-d40.jpg", "--key-id", "2026-12",
                                                  "--expires-in", "1h", "--signing-keys", keys, "--port", "9000"],
                                      environment: [:], now: now)
        #expect(url == "http://127.0.0.1:9000/thumbnails/3/cameras/nikon-d40.jpg?exp=1796198400&kid=2026-12"
            + "&sig=I5gwVz4DMjaTPSdMjzVytPbL36fKSdEiBalFzTRiMSM")   // the vector's first case
        // Without --key-id: the first key.
        let first = try SignCommand.url(arguments: ["--grid=3", "--path=a.jpg", "--signing-keys=\(keys)"], environment: [:], now: now)
        #expect(first.contains("&kid=old&"))
        #expect(SignCommand.duration("7d") == 604_800 && SignCommand.duration("90") == 90 && SignCommand.duration("1w") == nil)
        // Past signed_url_max_seconds once rounded: refused.
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "3", "--path", "a.jpg", "--expires-in", "7d", "--signing-keys", keys],
                                environment: [:], now: now)
        }
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "9", "--path", "a.jpg", "--signing-keys", keys], environment: [:], now: now)
        }
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "3", "--path", "../etc/passwd", "--signing-keys", keys], environment: [:], now: now)
        }
    }

    /// A name that is not UTF-8 cannot reach `thumbd sign` through `--path` (the command line is
    /// read as text, and its invalid byte becomes U+FFFD, a URL of another name): `--url` takes
    /// the listing's `url` instead, and the URL it signs is the one the server accepts.
    @Test func signCommandSignsAListingURLOfANameThatIsNotUTF8() throws {
        let keys = "\(Self.key.id):\(Self.secretHex)"
        let now = 1_796_198_400 - 40 * 60 - 3600
        let url = try SignCommand.url(arguments: ["--grid", "3", "--url", "old/latin1-caf%E9.jpg", "--signing-keys", keys,
                                                  "--port", "9000"], environment: [:], now: now)
        let prefix = "http://127.0.0.1:9000/thumbnails/3/old/latin1-caf%E9.jpg?exp=1796198400&kid=2026-12&sig="
        #expect(url.hasPrefix(prefix))
        // The signature is over the name's own bytes (0xE9, not U+FFFD), as the server checks it.
        let sig = String(url.dropFirst(prefix.count))
        let bytes = Array("old/latin1-caf".utf8) + [0xE9] + Array(".jpg".utf8)
        #expect(sig == URLSigning.signature(key: Self.key, grid: Array("3".utf8), path: bytes, expires: 1_796_198_400))
        var signing = URLSigning()
        signing.keys = [Self.key]
        #expect(signing.refusal(path: "/thumbnails/3/old/latin1-caf%E9.jpg",
                                query: Substring("exp=1796198400&kid=2026-12&sig=\(sig)"), now: now) == nil)
        // --url and --path name the same path the same way; both at once, or an invalid escape, are refused.
        let viaPath = try SignCommand.url(arguments: ["--grid", "3", "--path", "a b.jpg", "--signing-keys", keys], environment: [:], now: now)
        let viaURL = try SignCommand.url(arguments: ["--grid", "3", "--url", "a%20b.jpg", "--signing-keys", keys], environment: [:], now: now)
        #expect(viaPath == viaURL)
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "3", "--url", "a.jpg", "--path", "a.jpg", "--signing-keys", keys], environment: [:], now: now)
        }
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "3", "--url", "a%zz.jpg", "--signing-keys", keys], environment: [:], now: now)
        }
        #expect(throws: ConfigError.self) {
            try SignCommand.url(arguments: ["--grid", "3", "--url", "a/%2e%2e/b.jpg", "--signing-keys", keys], environment: [:], now: now)
        }
    }

    @Test func configRefusesWeakOrRepeatedKeys() {
        func refusal(_ keys: [String]) -> String? {
            var config = Config()
            config.library = "/tmp"
            config.signingKeys = keys
            do { try ConfigLoader.validate(config); return nil } catch { return error.description }
        }
        #expect(refusal(["a:" + Self.secretHex, "b:" + Self.secretHex]) == nil)
        #expect(refusal(["a:" + String(repeating: "ab", count: 31)])?.contains("at least 64 hex digits") == true)
        #expect(refusal(["a:" + Self.secretHex, "a:" + Self.secretHex])?.contains("given twice") == true)
        #expect(refusal(["no colon"])?.contains("ID:HEXSECRET") == true)
        #expect(refusal(["bad id!:" + Self.secretHex])?.contains("ID:HEXSECRET") == true)
        // A refusal never repeats the secret.
        #expect(refusal(["a:" + Self.secretHex + "zz"])?.contains(Self.secretHex) == false)
    }

    @Test func aSignedServerServesSignedURLsOnlyAndKeepsOneCacheEntry() throws {
        let rotated = "old:\(String(repeating: "11", count: 32))"
        let server = try ServerHarness { $0.signingKeys = [rotated, "\(Self.key.id):\(Self.secretHex)"] }
        let path = "kodak-dc210-1998-vga.jpg"
        let now = Int(Date().timeIntervalSince1970)
        func signed(_ key: URLSigning.Key, expires: Int, grid: String = "3", path: String = path) -> String {
            "/thumbnails/\(grid)/\(path)?" + URLSigning.query(key: key, grid: Array(grid.utf8), path: Array(path.utf8), expires: expires)
        }
        let first = try server.get(signed(Self.key, expires: now + 600))
        #expect(first.status == 200)
        #expect(first.header("X-Cache") == "MISS")
        #expect(first.image?.width == 393 && first.image?.height == 393)
        // Another expiry and the other key: the same entry, the same ETag.
        let oldKey = URLSigning.Key(id: "old", secret: [UInt8](repeating: 0x11, count: 32))
        let second = try server.get(signed(oldKey, expires: now + 3600))
        #expect(second.status == 200)
        #expect(second.header("X-Cache") == "HIT-MEMORY")
        #expect(second.header("ETag") == first.header("ETag"))
        #expect(try server.get(signed(Self.key, expires: now + 60), headers: ["If-None-Match": first.header("ETag")!]).status == 304)
        // Unsigned: 403, the same answer for a path that exists and one that does not.
        let unsigned = try server.get("/thumbnails/3/\(path)")
        let missing = try server.get("/thumbnails/3/no-such-photo.jpg")
        #expect(unsigned.status == 403)
        #expect(unsigned.json["error"] as? String == "signature_required")
        #expect(unsigned.header("Cache-Control") == "no-store")
        #expect(missing.status == 403 && missing.body == unsigned.body)
        // Signed and missing: now (and only now) a 404.
        #expect(try server.get(signed(Self.key, expires: now + 600, path: "no-such-photo.jpg")).status == 404)
        // The listing and the rest are not thumbnails: unchanged.
        #expect(try server.get("/assets").status == 200)
    }
}
