/// Percent-encoding of an asset path at the byte level (RFC 3986 §2.1): what `GET /assets` gives
/// as an item's `url`, which reaches the file when appended to `/thumbnails/{grid}/` even when its
/// name is not UTF-8 (`latin1-caf\xE9.jpg` is `latin1-caf%E9.jpg`).
public enum PathEncoding {
    /// `path` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) and the `/`
    /// between segments written `%HH` (upper-case hex). Decoding each segment once gives the
    /// bytes back exactly.
    public static func percentEncoded(_ path: some Collection<UInt8>) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(path.count)
        for byte in path {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
