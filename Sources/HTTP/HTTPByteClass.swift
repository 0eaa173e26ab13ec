/// Byte classes of the HTTP grammar, as branch-light tests on a byte (no tables to initialise).
@usableFromInline enum HTTPByteClass {
    /// Bit masks of `tchar` for bytes 0–63 and 64–127: `!#$%&'*+-.^_`|~`, DIGIT, ALPHA
    /// (RFC 9110 §5.6.2).
    private static let tokenLow: UInt64 = 0x03FF_6CFA_0000_0000
    private static let tokenHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE

    /// Whether `b` is a `tchar` (RFC 9110 §5.6.2).
    @inline(__always) static func isToken(_ b: UInt8) -> Bool {
        if b < 64 { return (tokenLow >> UInt64(b)) & 1 == 1 }
        if b < 128 { return (tokenHigh >> UInt64(b - 64)) & 1 == 1 }
        return false
    }

    /// Whether `b` may appear in a field value: VCHAR, SP, HTAB or obs-text; no other CTL and no
    /// DEL (RFC 9110 §5.5).
    @inline(__always) static func isFieldValue(_ b: UInt8) -> Bool {
        (b >= 0x20 && b != 0x7F) || b == 0x09
    }

    /// Whether `b` may appear in a request-target: visible ASCII, or a byte ≥ 0x80 that is
    /// checked as UTF-8 afterwards (RFC 9112 §3.2, RFC 3986 §2).
    @inline(__always) static func isTarget(_ b: UInt8) -> Bool {
        b > 0x20 && b != 0x7F
    }

    /// ASCII lower case of `b`.
    @inlinable @inline(__always) static func lowercase(_ b: UInt8) -> UInt8 {
        (b >= 65 && b <= 90) ? b | 0x20 : b
    }
}
