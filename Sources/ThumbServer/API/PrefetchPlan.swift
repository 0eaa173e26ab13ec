import Foundation
import Library
import Rendering
import Thumbnails

/// A validated `POST /prefetch` body (docs/API.md, "Prefetch"):
/// `{"grid": "3", "sort": "newest", "start": 40, "end": 80}` (optionally with `"focus": 52`),
/// `{"grid": "3", "sort": "newest", "after": CURSOR, "count": 40}` or `{"grid": "3", "paths": [...]}`
/// (asset paths as text) and/or `"urls": [...]` (asset paths percent-encoded, as the listing's
/// `url` gives them: the form that reaches a name that is not UTF-8), with an optional `"format"` (`jpeg`, `png`, `webp`; without it, the entries of a GET without
/// WebP in its `Accept`).
struct PrefetchPlan {
    enum Items {
        /// Asset paths, split into segments (bytes, decoded) and checked to stay inside the library.
        case paths([[[UInt8]]])
        /// `start..<end` of the listing in `order` (end clamped later by the listing), warmed
        /// from `focus` (the client's position, `start` when the body has none; see `ordered`).
        case range(ListingOrder, start: Int, end: Int, focus: Int)
        /// `count` items of the listing in `order` from `start`: after a cursor's key (`after`),
        /// or from the top when the body has no `after` or it is null.
        case following(ListingOrder, start: ListingStart, count: Int)
    }

    /// Most paths one body may name.
    static let maxPaths = 100_000

    let grid: GridSpec
    let format: FormatChoice
    let items: Items

    /// - Throws: `APIError` 400 for a body that is not strict JSON or not a `PrefetchBody` (an
    ///   unknown field, a value of another type: `StrictJSON.decode`), an unknown grid or format,
    ///   a bad range (`start > end`, negative, not whole numbers, `start`/`end` beside
    ///   `after`/`count`, `focus` not a whole number ≥ 0 or beside `paths`/`after`), or a path
    ///   that leaves the library; 400 `bad_cursor` for an `after`
    ///   that is not a cursor of this server's, or of another sort.
    init(body: [UInt8], grids: [GridSpec], webpEnabled: Bool) throws(APIError) {
        let fields = try StrictJSON.decode(PrefetchBody.self, body: body)
        guard let grid = grids.first(where: { $0.name == fields.grid }) else {
            throw APIError.badRequest(GridSpec.unknown(fields.grid, among: grids))
        }
        self.grid = grid
        format = try fields.format.map { text throws(APIError) in try FormatChoice(parameter: text, webpEnabled: webpEnabled) }
            ?? .automatic
        if fields.paths != nil || fields.urls != nil {
            let paths = fields.paths ?? [], urls = fields.urls ?? []
            for (name, list) in [("paths", paths), ("urls", urls)] where list.count > Self.maxPaths {
                throw APIError.badRequest("\(name) must be an array of at most \(Self.maxPaths) strings")
            }
            guard paths.count + urls.count <= Self.maxPaths else {
                throw APIError.badRequest("paths and urls may name at most \(Self.maxPaths) assets together")
            }
            guard fields.start == nil, fields.end == nil, fields.after == nil, fields.count == nil, fields.focus == nil else {
                throw APIError.badRequest("give either paths (or urls) or a range (start/end, after/count), not both")
            }
            var list: [[[UInt8]]] = []
            list.reserveCapacity(paths.count + urls.count)
            for path in paths { list.append(try Self.segments(path).map { Array($0.utf8) }) }
            for url in urls { list.append(try Self.segments(url: url)) }
            items = .paths(list)
            return
        }
        func whole(_ name: String, _ number: PrefetchBody.WholeNumber?) throws(APIError) -> Int {
            guard let number else { throw APIError.badRequest("\(name) is missing") }
            return number.value
        }
        let order = try ListingOrder(parameter: fields.sort)
        if fields.after != nil || fields.count != nil {
            guard fields.start == nil, fields.end == nil else {
                throw APIError.badRequest("give either start/end or after/count, not both")
            }
            guard fields.focus == nil else { throw APIError.badRequest("focus goes with start/end only") }
            let count = try whole("count", fields.count)
            if case .some(.some(let token)) = fields.after {
                items = .following(order, start: .after(try ListingCursor(token: token, order: order).key), count: count)
            } else {
                items = .following(order, start: .offset(0), count: count)
            }
            return
        }
        let start = try whole("start", fields.start), end = try whole("end", fields.end)
        guard start <= end else { throw APIError.badRequest("start must not be greater than end") }
        items = .range(order, start: start, end: end, focus: fields.focus?.value ?? start)
    }

    /// A range's items in the order they are warmed: from the client's position `focus` (its
    /// first visible cell, a listing index) to the end, then those before it, nearest first,
    /// so a preheat rect that also covers rows the client has scrolled past warms the rows on
    /// screen and ahead of it first. `focus` at or before the range's first item keeps listing
    /// order; past its last, the whole range runs backwards (a client scrolling up).
    /// `items` are the range's items from `start` on, in listing order.
    static func ordered<T>(_ items: [T], start: Int, focus: Int) -> [T] {
        let split = min(max(focus - start, 0), items.count)
        return Array(items[split...]) + items[..<split].reversed()
    }

    /// A relative asset path's segments; `..`, `.`, empty segments, absolute paths and NUL are refused.
    static func segments(_ path: String) throws(APIError) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !path.hasPrefix("/"), !segments.isEmpty,
              segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.utf8.contains(0) }) else {
            throw APIError.badRequest("paths must be relative paths inside the library (got \(JSON.quote(path)))")
        }
        return segments
    }

    /// The decoded segments of a percent-encoded asset path (a listing item's `url`), each
    /// decoded once as a `GET`'s path is, so they may be bytes that are not UTF-8; refused as
    /// `segments(_:)` refuses, and for an invalid escape.
    static func segments(url: String) throws(APIError) -> [[UInt8]] {
        var segments: [[UInt8]] = []
        for raw in url.split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentDecoding.decodeBytes(raw) else {
                throw APIError.badRequest("urls must be percent-encoded paths (got \(JSON.quote(url)))")
            }
            segments.append(segment)
        }
        guard !url.hasPrefix("/"),
              segments.allSatisfy({ !$0.isEmpty && $0 != [0x2E] && $0 != [0x2E, 0x2E] && !$0.contains(0) }) else {
            throw APIError.badRequest("urls must be relative paths inside the library (got \(JSON.quote(url)))")
        }
        return segments
    }
}
