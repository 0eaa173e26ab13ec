/// Percent-encoding of asset paths for the URLs thumbd hands out (`/assets`), the inverse of
/// `PercentDecoding`: per `/`-separated segment, every byte outside RFC 3986's unreserved set
/// (`A-Z a-z 0-9 - . _ ~`, §2.3) becomes `%HH` (upper-case hex, §2.1), so the server's one
/// decoding of each segment gives the name back exactly (`+`, `%`, `?`, `#`, spaces and
/// non-ASCII included).
enum PercentEncoding {
    /// `path` with each segment encoded and the `/` between them kept.
    static func encodePath(_ path: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count + 8)
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") || isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xf)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
