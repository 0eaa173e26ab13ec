/// Percent-decoding of one path segment, exactly once, by RFC 3986 §2.1: `%HH` becomes the byte
/// HH, `+` stays a plus sign.
enum PercentDecoding {
    /// The decoded segment as text, or nil for an invalid escape (`%`, `%G1`, `%4`) or invalid UTF-8.
    static func decode<S: StringProtocol>(_ segment: S) -> String? {
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return String(segment) }
        return decodeBytes(segment).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// The decoded segment as bytes, which need not be UTF-8 (a file name on disk need not be),
    /// or nil for an invalid escape.
    static func decodeBytes<S: StringProtocol>(_ segment: S) -> [UInt8]? {
        let utf8 = segment.utf8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var i = utf8.startIndex
        while i != utf8.endIndex {
            let byte = utf8[i]
            if byte == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h != utf8.endIndex else { return nil }
                let l = utf8.index(after: h)
                guard l != utf8.endIndex, let high = hexValue(utf8[h]), let low = hexValue(utf8[l]) else { return nil }
                bytes.append(high << 4 | low)
                i = utf8.index(after: l)
            } else {
                bytes.append(byte)
                i = utf8.index(after: i)
            }
        }
        return bytes
    }

    /// The value of hex digit `c` (either case), nil for any other byte.
    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
