import Foundation
import HTTP
import Thumbnails

/// Output format negotiation (API.md, "output"): `?format=` forces a format; otherwise an
/// `Accept` that names `image/webp` with a non-zero q gives WebP (when enabled), as imgproxy
/// does — `image/*` and `*/*` do not, since every client that can show WebP names it.
enum Negotiation {
    /// The format choice for a request, or a 400 for an unknown `format` value.
    static func formatChoice(query: Substring?, accept: [String], webpEnabled: Bool) throws(APIError) -> FormatChoice {
        if let requested = queryValue("format", in: query) {
            switch requested.lowercased() {
            case "jpeg", "jpg": return .jpeg
            case "png": return .png
            case "webp":
                guard webpEnabled else { throw APIError.badRequest("WebP output is disabled on this server") }
                return .webp
            default: throw APIError.badRequest("format must be jpeg, png or webp")
            }
        }
        return webpEnabled && acceptsWebP(accept) ? .webp : .automatic
    }

    static func acceptsWebP(_ values: [String]) -> Bool {
        for value in values {
            for range in value.split(separator: ",") {
                let parts = range.split(separator: ";")
                guard let type = parts.first, type.trimmingWhitespace().lowercased() == "image/webp" else { continue }
                let zero = parts.dropFirst().contains { parameter in
                    let p = parameter.trimmingWhitespace().lowercased()
                    return p.hasPrefix("q=") && (Double(p.dropFirst(2)) ?? 1) == 0
                }
                if !zero { return true }
            }
        }
        return false
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
