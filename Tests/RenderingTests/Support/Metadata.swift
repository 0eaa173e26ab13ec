import Foundation

/// Byte signatures of the metadata a thumbnail must not carry (docs/API.md "output": no EXIF, GPS,
/// XMP, IPTC; the ICC profile dropped after conversion to sRGB).
enum Metadata {
    static let signatures: [(name: String, bytes: [UInt8])] = [
        ("EXIF (JPEG APP1 / WebP EXIF chunk)", Array("Exif\0\0".utf8)),
        ("EXIF (PNG eXIf chunk)", Array("eXIf".utf8)),
        ("XMP", Array("http://ns.adobe.com/xap/1.0/".utf8)),
        ("IPTC (Photoshop APP13)", Array("Photoshop 3.0".utf8)),
        ("ICC profile (JPEG APP2)", Array("ICC_PROFILE".utf8)),
        ("ICC profile (PNG iCCP chunk)", Array("iCCP".utf8)),
        ("ICC profile (WebP ICCP chunk)", Array("ICCP".utf8)),
    ]

    /// Names of the metadata kinds found in `bytes`; empty for a clean thumbnail.
    static func found(in bytes: [UInt8]) -> [String] {
        signatures.filter { bytes.contains(subsequence: $0.bytes) }.map(\.name)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs anywhere in the bytes (Foundation's search: a byte loop written
    /// here is slow in debug builds).
    func contains(subsequence needle: [UInt8]) -> Bool {
        Data(self).range(of: Data(needle)) != nil
    }
}
