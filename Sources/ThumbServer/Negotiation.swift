import Foundation
import HTTP
import Thumbnails

/// Output format negotiation (API.md, "output"): `?format=` forces a format; otherwise an
/// `Accept` that names `image/webp` with a non-zero q gives WebP (when enabled), as imgproxy
/// does — `image/*` and `*/*` do not, since every client that can show WebP names it.
enum Negotiation {
    /// The format choice for a request, or a 400 for a `format` value `FormatChoice(parameter:)`
    /// refuses.
    static func formatChoice(query: Substring?, accept: [String], webpEnabled: Bool) throws(APIError) -> FormatChoice {
        if let requested = queryValue("format", in: query) {
            return try FormatChoice(parameter: requested, webpEnabled: webpEnabled)
        }
        return webpEnabled && acceptsWebP(accept) ? .webp : .automatic
    }

    /// What a thumbnail URL's query asks for: the format choice (`formatChoice`) and the raw
    /// value of its first `v` (a `ThumbnailVersion` token), nil when it has none.
    /// A query of `v` alone (what `/assets` lists) is read over its bytes without allocating;
    /// other parameters go through `queryValue`. `v` is compared as sent, not decoded: a token
    /// is hex, and an encoded one only fails to match (which never makes a URL immutable).
    /// - Throws: `APIError` 400 for an unknown `format` value.
    static func thumbnailQuery(_ query: Substring?, accept: [String],
                               webpEnabled: Bool) throws(APIError) -> (format: FormatChoice, version: Substring.UTF8View?) {
        guard let query else { return (webpEnabled && acceptsWebP(accept) ? .webp : .automatic, nil) }
        let bytes = query.utf8
        var version: Substring.UTF8View?
        var others = false
        var start = bytes.startIndex
        while start != bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
            let pair = bytes[start..<end]
            if pair.first == UInt8(ascii: "v"), pair.count == 1 || pair[pair.index(after: pair.startIndex)] == UInt8(ascii: "=") {
                if version == nil { version = pair.count == 1 ? pair[pair.endIndex...] : pair.dropFirst(2) }
            } else if !pair.isEmpty {
                others = true
            }
            start = end == bytes.endIndex ? end : bytes.index(after: end)
        }
        let format = others ? try formatChoice(query: query, accept: accept, webpEnabled: webpEnabled)
            : (webpEnabled && acceptsWebP(accept) ? .webp : .automatic)
        return (format, version)
    }

    /// Whether an `Accept` field value names `image/webp` with a q above zero (RFC 9110 §12.5.1;
    /// type and parameter names compare case-insensitively; an unreadable q counts as 1).
    /// Scans UTF-8 bytes without allocating: browsers send a long `Accept` with every image
    /// request, and a `Character`-based scan was a fifth of a cache hit's time.
    static func acceptsWebP(_ values: [String]) -> Bool {
        for value in values {
            var value = value
            value.makeContiguousUTF8()
            if value.utf8.withContiguousStorageIfAvailable({ namesWebP(UnsafeRawBufferPointer($0)) }) == true { return true }
        }
        return false
    }

    private static func namesWebP(_ b: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        while start < b.count {
            var end = start
            while end < b.count && b[end] != UInt8(ascii: ",") { end += 1 }
            var typeEnd = start
            while typeEnd < end && b[typeEnd] != UInt8(ascii: ";") { typeEnd += 1 }
            if equalsIgnoringCase(b, trimmed(b, start, typeEnd), "image/webp") {
                var zero = false
                var p = typeEnd
                while p < end {   // parameters: ;name=value
                    var q = p + 1
                    while q < end && b[q] != UInt8(ascii: ";") { q += 1 }
                    let (s, e) = trimmed(b, p + 1, q)
                    if e - s >= 2, b[s] | 0x20 == UInt8(ascii: "q"), b[s + 1] == UInt8(ascii: "=") {
                        zero = isZeroQValue(b, s + 2, e)
                    }
                    p = q
                }
                if !zero { return true }
            }
            start = end + 1
        }
        return false
    }

    /// `start..<end` without leading and trailing spaces and tabs.
    private static func trimmed(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> (Int, Int) {
        var s = start, e = end
        while s < e && (b[s] == 0x20 || b[s] == 0x09) { s += 1 }
        while e > s && (b[e - 1] == 0x20 || b[e - 1] == 0x09) { e -= 1 }
        return (s, e)
    }

    private static func equalsIgnoringCase(_ b: UnsafeRawBufferPointer, _ range: (Int, Int), _ lower: StaticString) -> Bool {
        guard range.1 - range.0 == lower.utf8CodeUnitCount else { return false }
        let l = lower.utf8Start
        for i in 0..<lower.utf8CodeUnitCount {
            let c = b[range.0 + i]
            if ((c >= 65 && c <= 90) ? c | 0x20 : c) != l[i] { return false }
        }
        return true
    }

    /// A qvalue of zero: "0", or "0." followed by zeros only (RFC 9110 §12.4.2).
    private static func isZeroQValue(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Bool {
        guard start < end, b[start] == UInt8(ascii: "0") else { return false }
        guard start + 1 < end else { return true }
        guard b[start + 1] == UInt8(ascii: ".") else { return false }
        for i in (start + 2)..<end where b[i] != UInt8(ascii: "0") { return false }
        return true
    }

    /// The first value of `name` in a query string, percent-decoded (`%6Eewest` is `newest`;
    /// `+` is a space, as in HTML form encoding). A value that does not decode is returned as
    /// sent, so that it is refused as an invalid value.
    static func queryValue(_ name: String, in query: Substring?) -> Substring? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard PercentDecoding.decode(kv[0]) == name else { continue }
            guard kv.count > 1 else { return "" }
            let raw = kv[1].replacingOccurrences(of: "+", with: " ")
            return Substring(PercentDecoding.decode(raw) ?? raw)
        }
        return nil
    }
}
