import Rendering
#if canImport(Glibc)
import Glibc
#endif

/// The on-disk form of one cached thumbnail. A fixed little-endian header, the key's canonical
/// text, then the encoded image:
///
///     magic "THUMBD01" (8) | payload length u64 | XXH64 of payload u64 | format u8 |
///     width u32 | height u32 | key length u16 | key (UTF-8) | payload
///
/// `decode` accepts an entry only when the magic, the key, the exact file length and the
/// checksum all agree, so a truncated, empty, foreign or corrupt file is never served.
enum DiskEntry {
    static let magic: [UInt8] = Array("THUMBD01".utf8)
    static let fixedHeaderSize = 8 + 8 + 8 + 1 + 4 + 4 + 2

    static func encode(_ thumbnail: Thumbnail, key: String) -> [UInt8] {
        let keyBytes = Array(key.utf8.prefix(Int(UInt16.max)))
        var out = [UInt8]()
        out.reserveCapacity(fixedHeaderSize + keyBytes.count + thumbnail.bytes.count)
        out += magic
        append(&out, UInt64(thumbnail.bytes.count))
        append(&out, Digest.checksum(thumbnail.bytes))
        out.append(formatCode(thumbnail.format))
        append(&out, UInt32(truncatingIfNeeded: thumbnail.width))
        append(&out, UInt32(truncatingIfNeeded: thumbnail.height))
        append(&out, UInt16(keyBytes.count))
        out += keyBytes
        out += thumbnail.bytes
        return out
    }

    /// Bytes before the payload in an entry for `key`: the fixed header and the key.
    static func headSize(key: String) -> Int {
        fixedHeaderSize + min(key.utf8.count, Int(UInt16.max))
    }

    /// The thumbnail in an entry read as `head` (its first `headSize(key:)` bytes) and
    /// `payload` (the rest, kept as the thumbnail's bytes without a copy), or nil when they are
    /// not a complete, intact entry for `key`.
    static func decode(head: UnsafeRawBufferPointer, payload: [UInt8], key: String) -> Thumbnail? {
        guard head.count == headSize(key: key), head.starts(with: magic) else { return nil }
        let payloadLength = head.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let checksum = head.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        guard let format = format(code: head[24]) else { return nil }
        let width = Int(head.loadUnaligned(fromByteOffset: 25, as: UInt32.self).littleEndian)
        let height = Int(head.loadUnaligned(fromByteOffset: 29, as: UInt32.self).littleEndian)
        let keyLength = Int(head.loadUnaligned(fromByteOffset: 33, as: UInt16.self).littleEndian)
        guard fixedHeaderSize + keyLength == head.count, payloadLength == UInt64(payload.count),
              storedKey(in: head, equals: key),
              Digest.checksum(payload) == checksum else { return nil }
        return Thumbnail(bytes: payload, format: format, width: width, height: height)
    }

    /// Whether the key bytes after the fixed header are `key`'s UTF-8 (a `memcmp`).
    private static func storedKey(in head: UnsafeRawBufferPointer, equals key: String) -> Bool {
        var key = key
        key.makeContiguousUTF8()
        return key.utf8.withContiguousStorageIfAvailable { k -> Bool in
            let n = min(k.count, Int(UInt16.max))
            guard head.count - fixedHeaderSize == n else { return false }
            guard n > 0, let stored = head.baseAddress, let wanted = k.baseAddress else { return true }
            return memcmp(stored + fixedHeaderSize, wanted, n) == 0
        } ?? false
    }

    private static func append<T: FixedWidthInteger>(_ out: inout [UInt8], _ value: T) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func formatCode(_ format: ImageFormat) -> UInt8 {
        switch format {
        case .jpeg: 1
        case .png: 2
        case .webp: 3
        }
    }

    private static func format(code: UInt8) -> ImageFormat? {
        switch code {
        case 1: .jpeg
        case 2: .png
        case 3: .webp
        default: nil
        }
    }
}
