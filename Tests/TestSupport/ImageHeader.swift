/// Dimensions and format read straight from encoded bytes, without libvips, so tests check the
/// server's output independently of the code that produced it.
public struct ImageHeader: Equatable, CustomStringConvertible {
    public var format: String
    public var width: Int
    public var height: Int
    public var description: String { "\(format) \(width)x\(height)" }

    public init?(_ bytes: [UInt8]) {
        if bytes.starts(with: [0xFF, 0xD8]) {
            var i = 2
            while i + 9 < bytes.count {
                guard bytes[i] == 0xFF else { return nil }
                let marker = bytes[i + 1]
                if marker == 0xFF { i += 1; continue }
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                    self.init(format: "jpeg", width: Int(bytes[i + 7]) << 8 | Int(bytes[i + 8]),
                              height: Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]))
                    return
                }
                i += 2 + length
            }
            return nil
        }
        if bytes.count > 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
            self.init(format: "png", width: be32(16), height: be32(20))
            return
        }
        if bytes.count > 30, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            func le(_ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
            switch String(decoding: bytes[12..<16], as: UTF8.self) {
            case "VP8X": self.init(format: "webp", width: le(24, 3) + 1, height: le(27, 3) + 1)
            case "VP8 ": self.init(format: "webp", width: le(26, 2) & 0x3FFF, height: le(28, 2) & 0x3FFF)
            case "VP8L":
                let bits = le(21, 4)
                self.init(format: "webp", width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
            default: return nil
            }
            return
        }
        return nil
    }

    public init(format: String, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// Whether the bytes carry EXIF (a JPEG APP1 `Exif` segment, a PNG `eXIf` chunk, a WebP `EXIF` chunk).
    public static func containsEXIF(_ bytes: [UInt8]) -> Bool {
        for pattern in [Array("Exif\0\0".utf8), Array("eXIf".utf8), Array("EXIF".utf8)] {
            if bytes.count >= pattern.count,
               (0...(bytes.count - pattern.count)).contains(where: { bytes[$0..<$0 + pattern.count].elementsEqual(pattern) }) {
                return true
            }
        }
        return false
    }
}
