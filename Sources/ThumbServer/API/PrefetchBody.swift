import Foundation

/// A `POST /prefetch` body as it is sent, field for field (docs/API.md, "Prefetch"), read by
/// `StrictJSON.decode`: an unknown field, a value of another JSON type (`"grid": 3`) or a null
/// where a value must be is refused naming the field. `PrefetchPlan` checks what the fields
/// mean together.
struct PrefetchBody: StrictJSONObject {
    /// A whole number ≥ 0 as JSON numbers go: `40`, `40.0`, `1e15` (a client may send 2^53 - 1
    /// for "to the end"), clamped to `Int32.max`, past which no listing reaches.
    struct WholeNumber: Decodable, Equatable {
        let value: Int

        init(from decoder: any Decoder) throws {
            let number = try decoder.singleValueContainer().decode(Double.self)
            guard number >= 0, number.isFinite, number.rounded() == number else {
                throw APIError.badRequest("\(decoder.codingPath.last?.stringValue ?? "a number") must be a whole number ≥ 0")
            }
            value = number >= Double(Int32.max) ? Int(Int32.max) : Int(number)
        }
    }

    static let fields: [(name: String, type: String)] = [
        ("grid", "a string (a grid's name, e.g. \"3\")"), ("format", "a string (jpeg, png or webp)"),
        ("sort", "newest or oldest"), ("start", "a whole number ≥ 0"), ("end", "a whole number ≥ 0"),
        ("focus", "a whole number ≥ 0"), ("after", "a cursor (a string), or null for the top of the listing"),
        ("count", "a whole number ≥ 0"), ("paths", "an array of strings"), ("urls", "an array of strings"),
    ]

    var grid: String
    var format: String?
    var sort: String?
    var start: WholeNumber?
    var end: WholeNumber?
    var focus: WholeNumber?
    /// Nil when the body has no `after`; `.some(nil)` for `"after": null`.
    var after: String??
    var count: WholeNumber?
    var paths: [String]?
    var urls: [String]?

    private enum CodingKeys: String, CodingKey {
        case grid, format, sort, start, end, focus, after, count, paths, urls
    }

    /// - Throws: `APIError` 400 for a field not in `fields`, 400 `bad_cursor` for an `after`
    ///   that is neither a string nor null; `DecodingError` for a field of another type.
    init(from decoder: any Decoder) throws {
        try StrictJSON.refuseUnknownFields(of: Self.self, in: decoder)
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        grid = try fields.decode(String.self, forKey: .grid)
        format = try fields.strictIfPresent(String.self, forKey: .format)
        sort = try fields.strictIfPresent(String.self, forKey: .sort)
        start = try fields.strictIfPresent(WholeNumber.self, forKey: .start)
        end = try fields.strictIfPresent(WholeNumber.self, forKey: .end)
        focus = try fields.strictIfPresent(WholeNumber.self, forKey: .focus)
        count = try fields.strictIfPresent(WholeNumber.self, forKey: .count)
        paths = try fields.strictIfPresent([String].self, forKey: .paths)
        urls = try fields.strictIfPresent([String].self, forKey: .urls)
        if fields.contains(.after) {
            if try fields.decodeNil(forKey: .after) {
                after = .some(nil)
            } else if let token = try? fields.decode(String.self, forKey: .after) {
                after = token
            } else {
                throw APIError.badCursor("after must be a cursor (a string), or null for the top of the listing")
            }
        } else {
            after = nil
        }
    }
}
