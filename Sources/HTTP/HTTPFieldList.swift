/// Comma-separated field values (RFC 9110 §5.6.1: `#element`, members separated by `,` with
/// optional whitespace around them), read over their bytes: no `String`, no allocation, so the
/// server's `Connection` check on every request and a responder's `Accept` and `If-None-Match`
/// reads cost no more than a scan. Quoted strings are not parsed: a `,` inside one separates
/// members too (none of the fields read this way carries one that matters).
public enum HTTPFieldList {
    /// The members of `value` split at `separator` (`,`; `;` for a member's parameters), each
    /// without leading and trailing spaces and tabs (OWS). Empty members are included (they
    /// match nothing): `"a, ,b"` gives `a`, an empty member and `b`.
    public struct Members: Sequence, IteratorProtocol {
        @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
        @usableFromInline let separator: UInt8
        @usableFromInline var start = 0

        @inlinable init(_ bytes: UnsafeBufferPointer<UInt8>, separator: UInt8) {
            self.bytes = bytes
            self.separator = separator
        }

        @inlinable public mutating func next() -> UnsafeBufferPointer<UInt8>? {
            guard start <= bytes.count else { return nil }
            var end = start
            while end < bytes.count && bytes[end] != separator { end += 1 }
            var s = start, e = end
            while s < e && (bytes[s] == 0x20 || bytes[s] == 0x09) { s += 1 }
            while e > s && (bytes[e - 1] == 0x20 || bytes[e - 1] == 0x09) { e -= 1 }
            start = end + 1
            return UnsafeBufferPointer(rebasing: bytes[s..<e])
        }
    }

    /// The members of `value` (see `Members`); the buffers point into `value`.
    @inlinable
    public static func members(_ value: UnsafeBufferPointer<UInt8>, separator: UInt8 = UInt8(ascii: ",")) -> Members {
        Members(value, separator: separator)
    }

    /// Whether a member of `value` is `token`, ASCII case-insensitively (`token` given in lower
    /// case), as `Connection: Keep-Alive, close` holds `close`.
    @inlinable
    public static func contains(_ value: UnsafeBufferPointer<UInt8>, token: StaticString) -> Bool {
        for member in members(value) where equalsIgnoringCase(member, token) { return true }
        return false
    }

    /// Whether `bytes` spell `lowercase` (given in lower case) in any ASCII case.
    @inlinable
    public static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let l = lowercase.utf8Start
        for i in 0..<bytes.count where HTTPByteClass.lowercase(bytes[i]) != l[i] { return false }
        return true
    }
}
