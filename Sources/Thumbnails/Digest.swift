import CXXHash

/// Non-cryptographic digests from xxHash (Debian `libxxhash-dev`): cache-key file names and
/// disk-entry checksums. Collisions between keys are harmless: a disk entry stores its full key
/// and a mismatch is a miss.
enum Digest {
    /// XXH3-128 of `bytes` as 32 lower-case hex characters.
    static func hex128<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let hash = Array(bytes).withUnsafeBytes { XXH3_128bits($0.baseAddress, $0.count) }
        return hexString(hash.high64) + hexString(hash.low64)
    }

    /// XXH64 (seed 0) of the bytes in `buffer`.
    static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt64 {
        XXH64(buffer.baseAddress, buffer.count, 0)
    }

    static func checksum(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// `value` as 16 lower-case hex characters, most significant first.
    static func hexString(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        var v = value
        for i in stride(from: 15, through: 0, by: -1) {
            out[i] = digits[Int(v & 0xf)]
            v >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }
}
