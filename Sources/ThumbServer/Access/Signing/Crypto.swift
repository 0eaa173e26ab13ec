import CCryptoShim

/// HMAC-SHA256, SHA-256 and a constant-time compare, all by OpenSSL's libcrypto (Debian
/// `libssl-dev`, through `CCryptoShim`): no hashing of thumbd's own.
enum Crypto {
    /// Bytes of a SHA-256 digest and of an HMAC-SHA256: 32.
    static let digestBytes = Int(CCRYPTO_SHIM_SHA256_BYTES)

    /// Makes libcrypto load what it loads at its first use (its config file, the time zone), by
    /// one HMAC of nothing: call it at start, so that no request is the first.
    static func start() {
        _ = hmacSHA256(key: [0], message: [])
    }

    /// HMAC-SHA256 (RFC 2104, FIPS 180-4) of `message` under `key`: 32 bytes.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: digestBytes)
        let ok = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    ccrypto_shim_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, o.baseAddress)
                }
            }
        }
        // libcrypto fails here only when it cannot allocate a few hundred bytes: nothing to answer then.
        precondition(ok == 1, "libcrypto's HMAC-SHA256 failed")
        return out
    }

    /// SHA-256 (FIPS 180-4) of `bytes`: 32 bytes.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: digestBytes)
        let ok = bytes.withUnsafeBufferPointer { b in
            out.withUnsafeMutableBufferPointer { o in ccrypto_shim_sha256(b.baseAddress, b.count, o.baseAddress) }
        }
        precondition(ok == 1, "libcrypto's SHA-256 failed")
        return out
    }

    /// Whether `a` and `b` hold the same bytes, compared by `CRYPTO_memcmp`, whose time depends
    /// on the length alone, not on how many leading bytes match. Different lengths are unequal
    /// at once: every value compared here (a digest) has a length that is no secret.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in ccrypto_shim_equal(x.baseAddress, y.baseAddress, x.count) == 1 }
        }
    }

    /// `bytes` as lowercase hex.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of hex `text` (either case); nil for an odd length or any other character.
    static func bytes(hex text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let high = PercentDecoding.hexValue(chars[i]), let low = PercentDecoding.hexValue(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
