/// Base64 with the URL and filename safe alphabet, without padding (RFC 4648 §5, §3.2): what
/// a query value carries without percent-encoding.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [UInt8: UInt32] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, UInt32($0)) })

    /// `bytes` as base64url text, no `=` padding.
    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var group: UInt32 = 0
            for j in 0..<3 { group = group << 8 | UInt32(j < n ? bytes[i + j] : 0) }
            for j in 0...n { out.append(alphabet[Int(group >> UInt32(18 - 6 * j) & 63)]) }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64url `text` without padding; nil for any other character, `=`, a
    /// length that leaves a single character over, or leftover bits that are not zero (so
    /// each byte string has exactly one spelling).
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var i = 0
        while i < chars.count {
            let n = min(4, chars.count - i)
            var group: UInt32 = 0
            for j in 0..<4 {
                guard j < n else { group <<= 6; continue }
                guard let value = values[chars[i + j]] else { return nil }
                group = group << 6 | value
            }
            let produced = n - 1
            for j in 0..<produced { out.append(UInt8(truncatingIfNeeded: group >> UInt32(16 - 8 * j))) }
            // The bits of the last character that fall past the last byte must be zero.
            if n < 4, group & (UInt32(1) << UInt32(24 - 8 * produced) - 1) != 0 { return nil }
            i += 4
        }
        return out
    }
}
