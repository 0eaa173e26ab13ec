import Library
import Rendering
import Thumbnails

/// The values a client names in a thumbnail URL's query, a listing's query and a prefetch body,
/// each read by one rule wherever it arrives (docs/API.md, "output", "Listing", "Prefetch").
extension FormatChoice {
    /// The format a `format` value names (`?format=` of a thumbnail URL, `"format"` of a
    /// prefetch body): `jpeg` (also `jpg`), `png` or `webp`, in any ASCII case. `sent`: the
    /// value as the client sent it (a query's, not percent-decoded), for the message; `value`
    /// when nil.
    /// - Throws: `APIError` 400 for any other value, quoting it, and for `webp` when
    ///   `webpEnabled` is false.
    init(parameter value: some StringProtocol, webpEnabled: Bool, sent: Substring? = nil) throws(APIError) {
        switch value.lowercased() {
        case "jpeg", "jpg": self = .jpeg
        case "png": self = .png
        case "webp":
            guard webpEnabled else { throw APIError.badRequest("WebP output is disabled on this server") }
            self = .webp
        default: throw APIError.badRequest("format must be jpeg, png or webp (not \(JSON.quote(String(sent ?? Substring(value)))))")
        }
    }
}

extension ListingOrder {
    /// The order a `sort` value names (`?sort=` of `/assets`, `"sort"` of a range prefetch):
    /// `newest` (also when there is none) or `oldest`, spelled exactly so. `sent`: the value
    /// as the client sent it, for the message; `value` when nil.
    /// - Throws: `APIError` 400 for any other value, quoting it.
    init(parameter value: String?, sent: Substring? = nil) throws(APIError) {
        switch value ?? "newest" {
        case "newest": self = .newest
        case "oldest": self = .oldest
        case let other: throw APIError.badRequest("sort must be newest or oldest (not \(JSON.quote(String(sent ?? Substring(other)))))")
        }
    }

    /// The order `?sort=` of `query` names (`init(parameter:sent:)`, the value percent-decoded
    /// as `Negotiation.queryValue` reads it, quoted as sent).
    /// - Throws: `APIError` 400 for a value that names none.
    init(query: Substring?) throws(APIError) {
        try self.init(parameter: Negotiation.queryValue("sort", in: query).map(String.init),
                      sent: Negotiation.sentValue("sort", in: query))
    }
}

extension GridSpec {
    /// The sentence for a grid name no grid of `grids` has (a thumbnail URL's 404, a prefetch
    /// body's 400): the name given, and the grids there are.
    static func unknown(_ name: String, among grids: [GridSpec]) -> String {
        "no grid \(JSON.quote(name)) on this server: its grids are " + grids.map(\.name).joined(separator: ", ")
    }
}

/// The query parameters each route reads (docs/API.md, "Endpoints"): one a route does not read
/// is refused, not ignored, so that a misspelt or invented one (`?prefix=2024`, `?widht=`)
/// does not answer as if it were not there.
enum QueryParameters {
    /// A thumbnail URL's: `v` and `format`, and a signed URL's `exp`, `kid` and `sig` (known
    /// also while signing is off, so that URLs signed before still answer).
    static let thumbnail = ["v", "format", "exp", "kid", "sig"]
    /// `GET /assets`.
    static let listing = ["sort", "offset", "limit", "after"]
    /// `GET /assets/changes`.
    static let changes = ["sort", "since", "wait"]
    /// `DELETE /prefetch`.
    static let stopJobs = ["all"]
    /// `GET /cluster/placeholders` (a peer's pull).
    static let placeholderFeed = ["after", "limit", "epoch"]

    /// Refuses the first parameter of `query` whose name (percent-decoded, as `Negotiation.queryValue`
    /// reads names) is not in `known`, or is there a second time (the value read would be the
    /// first, silently: `?sort=oldest&sort=newest`); empty pairs (`a=1&&b=2`) are no parameter.
    /// - Throws: `APIError` 400 `bad_request` naming it and `resource`: for an unknown one with the
    ///   closest of `known` (`ConfigLoader.closest`) or else the list of them.
    static func check(_ query: Substring?, known: [String], of resource: String) throws(APIError) {
        guard let query else { return }
        var seen: Set<String> = []
        for pair in query.split(separator: "&") {
            let raw = pair.prefix { $0 != "=" }
            let name = PercentDecoding.decode(raw) ?? String(raw)
            guard known.contains(name) else {
                let hint = ConfigLoader.closest(to: name, among: known).map { "did you mean \($0)?" }
                    ?? (known.isEmpty ? "it takes none" : "it takes " + known.joined(separator: ", "))
                throw APIError.badRequest("\(resource) has no query parameter \(JSON.quote(name)) (\(hint))")
            }
            guard seen.insert(name).inserted else {
                throw APIError.badRequest("\(resource) takes the query parameter \(JSON.quote(name)) once (it is there twice)")
            }
        }
    }
}
