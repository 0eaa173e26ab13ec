import Foundation

/// A JPEG's EXIF thumbnail (IFD1) found without libexif, as an independent judge of what thumbd
/// reads through it: the first APP1 segment that starts with `Exif\0\0`, and in it the JPEG from
/// its SOI (FF D8 FF) to the last EOI (FF D9).
public enum ExifThumbnail {
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The thumbnail's JPEG bytes.
    /// - Throws: `Missing` when the file has no APP1 EXIF segment with a JPEG in it.
    public static func bytes(ofJPEG path: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let payload = Array(bytes[(i + 4)..<min(bytes.count, i + 2 + length)])
            if bytes[i + 1] == 0xE1, payload.starts(with: Array("Exif".utf8) + [0, 0]) {
                guard let start = (6..<(payload.count - 2)).first(where: { payload[$0] == 0xFF && payload[$0 + 1] == 0xD8 && payload[$0 + 2] == 0xFF }),
                      let end = (start..<(payload.count - 1)).last(where: { payload[$0] == 0xFF && payload[$0 + 1] == 0xD9 }) else { break }
                return Array(payload[start...(end + 1)])
            }
            i += 2 + length
        }
        throw Missing(description: "no EXIF thumbnail in \(path)")
    }
}
