import Foundation

/// Signed thumbnail URLs (README, "Deploying a private library"): on when `signing_keys` holds
/// a key, every thumbnail URL must carry `exp`, `kid` and `sig`:
///
///     /thumbnails/{grid}/{asset path}?v=…&exp={unix seconds}&kid={key id}&sig={signature}
///
/// `sig` is HMAC-SHA256 under key `kid` of `{grid}\n{asset path}\n{exp}` (UTF-8; the path as
/// text, NFC-normalised, segments joined by `/`, not percent-encoded; a segment that is not
/// UTF-8 as its bytes), in base64url without padding (RFC 4648 §5), as imgproxy signs paths.
/// Several keys are valid at once, so that a new one can be rolled out before the old one goes.
/// Neither the signature nor the expiry enters the cache key or the ETag: re-signing a URL,
/// rotating a key or a later expiry hit the same cache entry.
public struct URLSigning: Sendable, Equatable {
    /// One secret and the id URLs name it by (`kid`).
    public struct Key: Sendable, Equatable {
        /// Letters, digits, `-`, `.` and `_`, at most 64 (`ConfigLoader.validate`).
        public var id: String
        /// At least 32 bytes (given as at least 64 hex digits; RFC 2104 §3).
        public var secret: [UInt8]

        public init(id: String, secret: [UInt8]) {
            self.id = id
            self.secret = secret
        }
    }

    /// The keys a URL may be signed with; empty (signing off) by default. The first is the one
    /// thumbd itself signs with (`/assets`, `thumbd sign`).
    public var keys: [Key] = []
    /// The latest `exp` accepted, in seconds from now (`signed_url_max_seconds`): a URL that
    /// lives longer is refused, as GCS caps signed URLs at 7 days. `604800` (7 days) by default.
    public var maxLifetimeSeconds = 604_800
    /// Expiries thumbd signs are rounded up to a whole multiple of this many seconds since 1970
    /// (`signed_url_bucket_seconds`), so that every URL signed for one thumbnail within a bucket
    /// is the same URL and a CDN or browser cache keeps hitting it. `3600` by default.
    public var bucketSeconds = 3600

    public init() {}

    /// Whether thumbnail URLs must be signed: some key is configured.
    public var isEnabled: Bool { !keys.isEmpty }

    /// The signed message: `{grid}\n{path}\n{expires}` as bytes; `path` as `canonicalPath` gives it.
    static func message(grid: [UInt8], path: [UInt8], expires: Int) -> [UInt8] {
        grid + [0x0A] + path + [0x0A] + Array(String(expires).utf8)
    }

    /// The path a signature covers: `segments` (decoded names) joined by `/`, each that is UTF-8
    /// in NFC (so a Mac's NFD spelling and a backend's NFC one sign alike), the others as bytes.
    static func canonicalPath(_ segments: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, segment) in segments.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "/")) }
            if segment.allSatisfy({ $0 < 0x80 }) {
                out += segment   // ASCII is its own NFC
            } else if let text = String(validating: segment, as: UTF8.self) {
                out += Array(text.precomposedStringWithCanonicalMapping.utf8)
            } else {
                out += segment
            }
        }
        return out
    }

    /// The base64url signature of `grid`, `path` (`canonicalPath`'s form) and `expires` (seconds
    /// since 1970) under `key`.
    static func signature(key: Key, grid: [UInt8], path: [UInt8], expires: Int) -> String {
        Base64URL.encode(Crypto.hmacSHA256(key: key.secret, message: message(grid: grid, path: path, expires: expires)))
    }

    /// The query parameters that sign `grid` and `path` until `expires` under `key`:
    /// `exp=…&kid=…&sig=…` (no escaping needed: digits, the key id's characters, base64url).
    static func query(key: Key, grid: [UInt8], path: [UInt8], expires: Int) -> String {
        "exp=\(expires)&kid=\(key.id)&sig=" + signature(key: key, grid: grid, path: path, expires: expires)
    }

    /// `now + lifetime` (seconds since 1970) rounded up to a whole `bucketSeconds`.
    func expiry(now: Int, lifetime: Int) -> Int {
        let bucket = max(1, bucketSeconds)
        let end = now + lifetime
        return (end + bucket - 1) / bucket * bucket
    }

    /// The 403 for a thumbnail request whose URL is not signed as this server needs, or nil when
    /// it is (or signing is off). Reads only the URL and the clock, never the filesystem, so a
    /// refusal says nothing of whether the path exists. `path` is the request's path, still
    /// percent-encoded (`/thumbnails/{grid}/{asset path}`); `now` in seconds since 1970.
    /// `exp`, `kid` and `sig` are read as sent, not percent-decoded (`parameters`). The signature
    /// is compared in constant time (`Crypto.equal`, `CRYPTO_memcmp`), then the expiry is judged, so `signature_expired` and `expiry_too_far` speak only of URLs that
    /// were genuinely signed.
    func refusal(path: Substring, query: Substring?, now: Int) -> APIError? {
        do {
            _ = try verifiedExpiry(path: path, query: query, now: now)
            return nil
        } catch {
            return error
        }
    }

    /// The `exp` (seconds since 1970) of a thumbnail URL signed as this server needs, which its
    /// responses must not be cached past (`ServiceConfiguration.thumbnailCacheControl`); nil
    /// when signing is off. Checks as `refusal` says.
    /// - Throws: `APIError` 403, the one `refusal` gives.
    func verifiedExpiry(path: Substring, query: Substring?, now: Int) throws(APIError) -> Int? {
        guard isEnabled else { return nil }
        let (exp, kid, sig, repeated) = Self.parameters(query)
        guard exp != nil || kid != nil || sig != nil else {
            throw Self.refused("signature_required",
                               "this server serves signed thumbnail URLs only: add exp, kid and sig (docs/deploying.md, \"Signed thumbnail URLs\")")
        }
        if let repeated {
            throw Self.refused("signature_invalid", "a signed URL carries \(repeated) once (it is there more than once)")
        }
        guard let exp, let kid, let sig else {
            throw Self.refused("signature_invalid", "a signed URL needs all of exp, kid and sig")
        }
        // Digits only, without a leading zero: one `exp` has one spelling, the one signed.
        guard exp.utf8.count <= 12, exp.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              exp.utf8.count == 1 || exp.utf8.first != UInt8(ascii: "0"), let expires = Int(exp) else {
            throw Self.refused("signature_invalid", "exp must be a time in whole seconds since 1970, without leading zeros")
        }
        guard let key = keys.first(where: { $0.id == kid }) else {
            throw Self.refused("signature_invalid", "no signing key of this server has the id in kid")
        }
        guard let presented = Base64URL.decode(sig), presented.count == Crypto.digestBytes else {
            throw Self.refused("signature_invalid", "sig must be 43 characters of base64url (an HMAC-SHA256)")
        }
        var segments: [[UInt8]] = []
        for raw in path.dropFirst("/thumbnails/".count).split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentDecoding.decodeBytes(raw) else {
                throw Self.refused("signature_invalid", "the signature does not match this URL's grid, path and exp")
            }
            segments.append(segment)
        }
        let grid = segments.first ?? []
        let expected = Crypto.hmacSHA256(key: key.secret, message: Self.message(
            grid: grid, path: Self.canonicalPath(Array(segments.dropFirst())), expires: expires))
        guard Crypto.equal(presented, expected) else {
            throw Self.refused("signature_invalid", "the signature does not match this URL's grid, path and exp")
        }
        if expires < now {
            throw Self.refused("signature_expired", "the signed URL expired \(now - expires) s ago; ask for a new one")
        }
        if expires - now > maxLifetimeSeconds {
            throw Self.refused("expiry_too_far", "the signed URL expires more than \(maxLifetimeSeconds) s from now "
                + "(signed_url_max_seconds); sign it for a shorter time")
        }
        return expires
    }

    /// The `exp`, `kid` and `sig` of `query`, as sent: in one pass over its bytes, with no
    /// decoding (none of their valid values needs an escape, so an escaped one fails its check).
    /// Nil for each that is absent; `repeated`: the first of them that is there twice (which
    /// would leave it to the reader which one counts), nil when none is.
    static func parameters(_ query: Substring?) -> (exp: Substring?, kid: Substring?, sig: Substring?, repeated: String?) {
        guard let query else { return (nil, nil, nil, nil) }
        var exp: Substring?, kid: Substring?, sig: Substring?, repeated: String?
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            guard pair.count >= 4, pair[pair.index(pair.startIndex, offsetBy: 3)] == UInt8(ascii: "=") else { continue }
            let name = pair.prefix(3), value = Substring(pair.dropFirst(4))
            if name.elementsEqual("exp".utf8) { if exp == nil { exp = value } else if repeated == nil { repeated = "exp" } }
            else if name.elementsEqual("kid".utf8) { if kid == nil { kid = value } else if repeated == nil { repeated = "kid" } }
            else if name.elementsEqual("sig".utf8) { if sig == nil { sig = value } else if repeated == nil { repeated = "sig" } }
        }
        return (exp, kid, sig, repeated)
    }

    private static func refused(_ code: String, _ message: String) -> APIError {
        APIError(status: 403, code: code, message: message)
    }
}
