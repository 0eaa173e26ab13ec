/// Hand-built decompression bombs: tiny files whose headers declare huge or countless images.
enum Bombs {
    /// A 69-byte PNG whose IHDR declares 30000x30000 RGB (900 megapixels).
    static var png: [UInt8] {
        var ihdr: [UInt8] = []
        ihdr += be32(30000) + be32(30000) + [8, 2, 0, 0, 0]
        let idat: [UInt8] = [120, 156, 99, 96, 160, 61, 0, 0, 0, 100, 0, 1]   // zlib of 100 zero bytes
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + pngChunk("IHDR", ihdr) + pngChunk("IDAT", idat) + pngChunk("IEND", [])
    }

    /// A 101-byte baseline JPEG whose SOF0 declares 65000x65000, three components.
    static var jpeg: [UInt8] {
        let sof: [UInt8] = [0xFF, 0xC0, 0, 17, 8] + be16(65000) + be16(65000) + [3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]
        let sos: [UInt8] = [0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0, 3, 0, 0, 0x3F, 0]
        return [0xFF, 0xD8] + sof + sos + [UInt8](repeating: 0, count: 64) + [0xFF, 0xD9]
    }

    /// A GIF of `frames` 1x1 frames (looping), about 23 bytes each.
    static func gif(frames: Int) -> [UInt8] {
        var out = Array("GIF89a".utf8) + le16(1) + le16(1) + [0x80, 0, 0] + [0, 0, 0, 0xFF, 0xFF, 0xFF]
        out += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0]
        // Graphic control (1/100 s), image descriptor 1x1, LZW minimum code size 2, codes clear-0-end.
        let frame: [UInt8] = [0x21, 0xF9, 4, 0, 1, 0, 0, 0, 0x2C] + le16(0) + le16(0) + le16(1) + le16(1) + [0, 2, 2, 0x44, 0x01, 0]
        for _ in 0..<frames { out += frame }
        return out + [0x3B]
    }

    private static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    private static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    private static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(crc32(typed))
    }

    /// CRC-32 (ISO-HDLC, as PNG uses), bit by bit.
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
