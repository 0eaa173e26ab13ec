#if canImport(Glibc)
import Glibc
#endif

/// A path as the kernel takes it: bytes. A Linux file name is any bytes but `/` and NUL, and
/// need not be UTF-8 (a photo copied from an old Windows share may be named in Latin-1), nor
/// in any one Unicode form (macOS writes NFD, most other systems NFC). A `String` cannot hold
/// the first and compares the second as equal (Swift compares strings by canonical
/// equivalence), so paths on disk travel as these bytes, compared and hashed byte for byte.
/// Held NUL-terminated, so a system call takes it without a copy.
public struct DiskPath: Sendable, Hashable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The bytes followed by one NUL.
    private var storage: [UInt8]

    /// The path of `string`'s UTF-8 bytes.
    public init(_ string: String) {
        storage = Array(string.utf8)
        storage.append(0)
    }

    /// The path of `bytes` (which must not contain NUL).
    public init(bytes: some Sequence<UInt8>) {
        storage = Array(bytes)
        storage.append(0)
    }

    /// The path in a NUL-terminated C string (what `realpath` or `readdir` gives).
    public init(cString: UnsafePointer<CChar>) {
        var storage: [UInt8] = []
        var p = UnsafeRawPointer(cString).assumingMemoryBound(to: UInt8.self)
        while p.pointee != 0 {
            storage.append(p.pointee)
            p += 1
        }
        storage.append(0)
        self.storage = storage
    }

    /// The path of a literal's UTF-8 bytes.
    public init(stringLiteral value: String) { self.init(value) }

    /// The bytes, without the terminating NUL.
    public var bytes: ArraySlice<UInt8> { storage.dropLast() }

    /// Length in bytes.
    public var count: Int { storage.count - 1 }

    /// The path as text when its bytes are valid UTF-8 (in whatever Unicode form), else nil.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    /// Whether the bytes are valid UTF-8.
    public var isUTF8: Bool { string != nil }

    /// For messages and display: the bytes as UTF-8, each invalid sequence shown as U+FFFD.
    /// Not a name to look up: two paths may show the same.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// `self` + `/` + `name`.
    public func appending(_ name: some Collection<UInt8>) -> DiskPath {
        var storage = storage
        storage.removeLast()
        storage.append(UInt8(ascii: "/"))
        storage.append(contentsOf: name)
        storage.append(0)
        var path = self
        path.storage = storage
        return path
    }

    /// Whether the path lies under `directory` (`directory` + `/` + more).
    public func isInside(_ directory: DiskPath) -> Bool {
        let bytes = bytes, prefix = directory.bytes
        return bytes.count > prefix.count && bytes.starts(with: prefix)
            && bytes[bytes.startIndex + prefix.count] == UInt8(ascii: "/")
    }

    /// The `/`-separated parts (empty ones kept).
    public var segments: [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    }

    /// Calls `body` with the path as a NUL-terminated C string, without copying it.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try storage.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// Byte order (for valid UTF-8, the order of code points): `memcmp(3)` over the shorter
    /// length, then the shorter first.
    public static func < (a: DiskPath, b: DiskPath) -> Bool {
        a.storage.withUnsafeBytes { x in
            b.storage.withUnsafeBytes { y in
                let common = min(x.count, y.count) - 1   // without the NULs
                let order = common > 0 ? memcmp(x.baseAddress!, y.baseAddress!, common) : 0
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    /// Byte for byte (`memcmp(3)`); the synthesised `==` compared element by element.
    public static func == (a: DiskPath, b: DiskPath) -> Bool {
        a.storage.withUnsafeBytes { x in
            b.storage.withUnsafeBytes { y in x.count == y.count && memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    /// The bytes in one call (`Hasher.combine(bytes:)`): the synthesised hash fed the hasher
    /// one byte at a time, and was a fifth of a 10,000-file listing update (perf, 100,000 records).
    public func hash(into hasher: inout Hasher) {
        storage.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Bytes as a set's key, hashed in one call (an `ArraySlice<UInt8>` hashes byte by byte): the
/// directories of a listing update, looked up once per `/` of every path in scope.
public struct ByteKey: Hashable, Sendable {
    /// The bytes this key stands for.
    public let bytes: ArraySlice<UInt8>

    /// The key of `bytes`.
    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Byte for byte.
    public static func == (a: ByteKey, b: ByteKey) -> Bool {
        a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
        }
    }

    /// The bytes in one call.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
