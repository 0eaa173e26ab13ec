import Library
import Thumbnails

/// The values a client names in a thumbnail URL's query, a listing's query and a prefetch body,
/// each read by one rule wherever it arrives (docs/API.md, "output", "Listing", "Prefetch").
extension FormatChoice {
    /// The format a `format` value names (`?format=` of a thumbnail URL, `"format"` of a
    /// prefetch body): `jpeg` (also `jpg`), `png` or `webp`, in any ASCII case.
    /// - Throws: `APIError` 400 for any other value, and for `webp` when `webpEnabled` is false.
    init(parameter value: some StringProtocol, webpEnabled: Bool) throws(APIError) {
        switch value.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        case "webp":
            guard webpEnabled else { throw APIError.badRequest("WebP output is disabled on this server") }
            self = .webp
        default: throw APIError.badRequest("format must be jpeg, png or webp")
        }
    }
}

extension ListingOrder {
    /// The order a `sort` value names (`?sort=` of `/assets`, `"sort"` of a range prefetch):
    /// `newest` (also when there is none) or `oldest`, spelled exactly so.
    /// - Throws: `APIError` 400 for any other value.
    init(parameter value: String?) throws(APIError) {
        switch value ?? "newest" {
        case "newest": self = .newest
        case "oldest": self = .oldest
        default: throw APIError.badRequest("sort must be newest or oldest")
        }
    }
}
