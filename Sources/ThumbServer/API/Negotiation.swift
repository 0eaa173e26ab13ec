import Foundation
import HTTP
import Thumbnails

/// Output format negotiation (docs/API.md, "output"): `?format=` forces a format; otherwise an
/// `Accept` that names `image/webp` with a non-zero q gives WebP (when enabled), as imgproxy
/// does — `image/*` and `*/*` do not, since every client that can show WebP names it.
enum Negotiation {
    /// The format choice for a request, or a 400 for a `format` value `FormatChoice(parameter:)`
    /// refuses.
    static func formatChoice(query: Substring?, accept: [String], webpEnabled: Bool) throws(APIError) -> FormatChoice {
        if let requested = queryValue("format", in: query) {
            return try FormatChoice(parameter: requested, webpEnabled: webpEnabled, sent: sentValue("format", in: query))
        }
        return webpEnabled && acceptsWebP(accept) ? .webp : .automatic
    }

    /// What a thumbnail URL's query asks for: the format choice (`formatChoice`) and the raw
    /// value of its first `v` (a `ThumbnailVersion` token), nil when it has none.
    /// A query of `v` alone (what `/assets` lists) is read over its bytes without allocating;
    /// other parameters go through `queryValue`. `v` is compared as sent, not decoded: a token
    /// is hex, and an encoded one only fails to match (which never makes a URL immutable).
    /// - Throws: `APIError` 400 for a parameter other than `QueryParameters.thumbnail`'s or one
    ///   given twice (`QueryParameters.check`), and for an unknown `format` value.
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
                if version == nil { version = pair.count == 1 ? pair[pair.endIndex...] : pair.dropFirst(2) } else { others = true }
            } else if !pair.isEmpty {
                others = true
            }
            start = end == bytes.endIndex ? end : bytes.index(after: end)
        }
        if others { try QueryParameters.check(query, known: QueryParameters.thumbnail, of: "a thumbnail URL") }
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
            if value.utf8.withContiguousStorageIfAvailable(namesWebP) == true { return true }
        }
        return false
    }

    /// Whether a member of the list is `image/webp` (any case) without a zero `q` among its
    /// parameters (`;name=value`; the last `q` counts).
    private static func namesWebP(_ list: UnsafeBufferPointer<UInt8>) -> Bool {
        for member in HTTPFieldList.members(list) {
            var parts = HTTPFieldList.members(member, separator: UInt8(ascii: ";"))
            guard let type = parts.next(), HTTPFieldList.equalsIgnoringCase(type, "image/webp") else { continue }
            var zero = false
            for parameter in parts where parameter.count >= 2 && parameter[0] | 0x20 == UInt8(ascii: "q")
                && parameter[1] == UInt8(ascii: "=") {
                zero = isZeroQValue(UnsafeBufferPointer(rebasing: parameter[2...]))
            }
            if !zero { return true }
        }
        return false
    }

    /// A qvalue of zero: "0", or "0." followed by zeros only (RFC 9110 §12.4.2).
    private static func isZeroQValue(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = b.first, first == UInt8(ascii: "0") else { return false }
        guard b.count > 1 else { return true }
        guard b[1] == UInt8(ascii: ".") else { return false }
        return b[2...].allSatisfy { $0 == UInt8(ascii: "0") }
    }

    /// The whole number `name` gives in a query string (`queryValue`), within `range`; `value`
    /// when it is absent (required when nil). `what` it must be, for the sentence: "a whole
    /// number" by default, followed by the range ("from 0 to 60", or "≥ 0" up to `Int.max`).
    /// - Throws: `APIError.badRequest` naming the parameter, the value as sent (`sentValue`:
    ///   `offset=1+2`, not the decoded `1 2`) and what it must be:
    ///   missing (when required), not a whole number (`wait=1.5`, `x`, empty), too small
    ///   (`since=-1`), or too large (above the range, or past what a 64-bit number holds:
    ///   `offset=99999999999999999999`).
    static func queryInteger(_ name: String, in query: Substring?, default value: Int?, range: ClosedRange<Int>,
                             what: String = "a whole number") throws(APIError) -> Int {
        let bounds = range.upperBound == Int.max ? "≥ \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
        let mustBe = "\(name) must be \(what) \(bounds)"
        guard let text = queryValue(name, in: query) else {
            guard let value else { throw .badRequest("\(name) is missing: \(mustBe)") }
            return value
        }
        let given = "\(name)=\(sentValue(name, in: query) ?? text)"
        let digits = text.drop { $0 == "-" || $0 == "+" }
        let isWhole = !digits.isEmpty && digits.count + 1 >= text.count && digits.allSatisfy { $0.isASCII && $0.isNumber }
        guard isWhole else { throw .badRequest("\(given) is not a whole number: \(mustBe)") }
        let negative = text.first == "-"
        guard let number = Int(text), number <= range.upperBound else {
            // Past Int's range when Int could not read digits: too large, or too small below 0.
            if negative && Int(text) == nil { throw .badRequest("\(given) is too small: \(mustBe)") }
            throw .badRequest("\(given) is too large: \(mustBe)")
        }
        guard number >= range.lowerBound else { throw .badRequest("\(given) is too small: \(mustBe)") }
        return number
    }

    /// The first value of `name` in a query string, percent-decoded (`%6Eewest` is `newest`;
    /// `+` is a space, as in HTML form encoding). A value that does not decode is returned as
    /// sent, so that it is refused as an invalid value.
    static func queryValue(_ name: String, in query: Substring?) -> Substring? {
        guard let sent = sentValue(name, in: query) else { return nil }
        let raw = sent.replacingOccurrences(of: "+", with: " ")
        return Substring(PercentDecoding.decode(raw) ?? raw)
    }

    /// The first value of `name` (its name percent-decoded) in a query string as the client
    /// sent it, not decoded: what a 400's message quotes (`offset=1+2`, `limit=%31x`), so that
    /// the client finds it in its own URL. Empty for a name without `=`.
    static func sentValue(_ name: String, in query: Substring?) -> Substring? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard PercentDecoding.decode(kv[0]) == name else { continue }
            return kv.count > 1 ? kv[1] : ""
        }
        return nil
    }
}
