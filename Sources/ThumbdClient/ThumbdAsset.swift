import Foundation

/// One of the server's thumbnail specs, named by the column count of the photo grid that shows
/// it (docs/API.md, "grid"): `1` (1179x2358 px, contain), `3` (393x393, cover), `5` (236x236,
/// cover) by default; a server's config may name others.
public struct ThumbdGrid: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The grid's name in URLs and prefetch bodies (`"3"`).
    public var name: String

    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }
    public init(from decoder: any Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// One photo per row: the whole photo in 1179x2358 px.
    public static let one = ThumbdGrid("1")
    /// Three per row: a 393x393 px centre square.
    public static let three = ThumbdGrid("3")
    /// Five per row: a 236x236 px centre square.
    public static let five = ThumbdGrid("5")

    /// The default grid of `columns` columns (1, 3 or 5; others are named as they are).
    public init(columns: Int) { self.name = String(columns) }

    public var description: String { name }
}

/// The listing's order: by `taken`, ties by path (docs/API.md, "Listing").
public enum ThumbdSort: String, Sendable, Codable {
    /// Newest first (the server's default).
    case newest
    /// Oldest first.
    case oldest
}

/// An output format forced with `?format=` (else JPEG, PNG for a source with alpha).
public enum ThumbdFormat: String, Sendable {
    case jpeg, png, webp
}

/// Whether an asset is a photo or a video (whose thumbnail is a poster frame).
public enum ThumbdMediaType: String, Sendable, Codable {
    case photo, video
}

/// One item of the listing (`GET /assets`), like a `PHAsset`: what a cell needs before any
/// thumbnail has come: its size, type, duration, placeholder and its thumbnails' URLs.
public struct ThumbdAsset: Sendable, Hashable, Identifiable {
    /// The listing's `url`: the asset path percent-encoded byte for byte, unique in a library.
    public var id: String { url }
    /// The asset path as text, `/`-separated (U+FFFD for each byte of a name that is not UTF-8:
    /// for display only; `url` reaches the file).
    public var path: String
    /// The asset path with every byte but `A-Z a-z 0-9 - . _ ~ /` percent-encoded.
    public var url: String
    /// The source file's size, bytes.
    public var bytes: Int
    /// Photo or video.
    public var mediaType: ThumbdMediaType
    /// A video's duration from its container (`.zero` when the container does not say); nil
    /// for a photo.
    public var duration: Duration?
    /// Width as displayed (after EXIF orientation; a video's non-square pixels and rotation
    /// applied), px.
    public var pixelWidth: Int
    /// Height as displayed, px.
    public var pixelHeight: Int
    /// The capture time (EXIF DateTimeOriginal, a video's container date), else the file's
    /// modification time.
    public var taken: Date
    /// The file's modification time.
    public var modified: Date
    /// The ThumbHash placeholder (5 to 25 bytes), or nil until the server has one.
    public var thumbhash: [UInt8]?
    /// Each grid's versioned thumbnail URL, absolute (signed when the server signs URLs): the
    /// URLs that get the long-lived `Cache-Control`.
    public var thumbnails: [ThumbdGrid: URL]

    public init(path: String, url: String, bytes: Int, mediaType: ThumbdMediaType, duration: Duration?,
                pixelWidth: Int, pixelHeight: Int, taken: Date, modified: Date, thumbhash: [UInt8]?,
                thumbnails: [ThumbdGrid: URL]) {
        self.path = path
        self.url = url
        self.bytes = bytes
        self.mediaType = mediaType
        self.duration = duration
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
        self.taken = taken
        self.modified = modified
        self.thumbhash = thumbhash
        self.thumbnails = thumbnails
    }
}

/// A listing page's `next`: an opaque cursor that continues after the page's last item, in the
/// same sort, however the library changed meanwhile.
public struct ThumbdCursor: Hashable, Sendable, CustomStringConvertible {
    /// The server's text, URL-safe.
    public var text: String
    public init(_ text: String) { self.text = text }
    public var description: String { text }
}

/// One page of the listing.
public struct ThumbdAssetPage: Sendable, Equatable {
    /// The page's assets, in its sort.
    public var assets: [ThumbdAsset]
    /// The items of the whole listing (a client key's folder alone, with a `prefix`).
    public var total: Int
    /// How many items come before the page's first, now.
    public var offset: Int
    /// Changes whenever the listing does (an image added, deleted, renamed or replaced; not a
    /// placeholder arriving); compare for equality only.
    public var generation: Int
    /// The cursor of the page's last item; nil when none follows.
    public var next: ThumbdCursor?
}

// MARK: - The listing's JSON

/// `GET /assets`'s body as sent (docs/API.md, "Listing").
struct ListingWire: Decodable {
    var total: Int
    var offset: Int
    var generation: Int
    var next: String?
    var items: [Item]

    struct Item: Decodable {
        var path: String
        var url: String
        var bytes: Int
        var type: ThumbdMediaType
        var duration_ms: Int?
        var width: Int
        var height: Int
        var taken: String
        var modified: String
        var thumbhash: String?
        var thumbnails: [String: String]
    }

    /// The page, its thumbnail URLs made absolute against `connection`'s base URL.
    /// - Throws: `ThumbdError.invalidResponse` for a date or placeholder the contract does not allow.
    func page(_ connection: ThumbdConnection) throws -> ThumbdAssetPage {
        ThumbdAssetPage(assets: try items.map { try $0.asset(connection) }, total: total, offset: offset, generation: generation,
                        next: next.map(ThumbdCursor.init))
    }
}

extension ListingWire.Item {
    /// The asset, its thumbnail URLs made absolute against `connection`'s base URL.
    /// - Throws: `ThumbdError.invalidResponse` for a date or placeholder the contract does not allow.
    func asset(_ connection: ThumbdConnection) throws -> ThumbdAsset {
        let item = self
        guard let taken = ISO8601.date(item.taken), let modified = ISO8601.date(item.modified) else {
            throw ThumbdError.invalidResponse("\(item.url): a date that is not ISO 8601 with an offset")
        }
        var hash: [UInt8]?
        if let text = item.thumbhash {
            guard let data = Data(base64Encoded: text) else {
                throw ThumbdError.invalidResponse("\(item.url): a thumbhash that is not base64")
            }
            hash = Array(data)
        }
        var thumbnails: [ThumbdGrid: URL] = [:]
        for (grid, target) in item.thumbnails { thumbnails[ThumbdGrid(grid)] = connection.url(target) }
        return ThumbdAsset(path: item.path, url: item.url, bytes: item.bytes, mediaType: item.type,
                           duration: item.duration_ms.map { .milliseconds($0) },
                           pixelWidth: item.width, pixelHeight: item.height, taken: taken, modified: modified,
                           thumbhash: hash, thumbnails: thumbnails)
    }
}

/// `GET /assets/changes`'s body as sent (docs/API.md, "Change feed").
struct ChangesWire: Decodable {
    var since: Int
    var generation: Int
    var total: Int
    var removed: [Removed]
    var inserted: [Placed]
    var changed: [Placed]

    struct Removed: Decodable {
        var index: Int
        var url: String
    }

    struct Placed: Decodable {
        var index: Int
        var item: ListingWire.Item
    }
}

/// thumbd's dates: `2024-05-01T12:30:00+09:00`, with `.123` ms when not whole seconds, or `Z`.
enum ISO8601 {
    static func date(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var value = 0
            for i in from..<from + count {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58,
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        var i = 19
        var fraction = 0.0
        if b[i] == 46 {   // '.'
            var scale = 0.1
            i += 1
            while i < b.count, (48...57).contains(b[i]) { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
        }
        var offsetSeconds = 0
        if i < b.count, b[i] == 90 {   // 'Z'
            i += 1
        } else if i + 6 == b.count, b[i] == 43 || b[i] == 45, b[i + 3] == 58,
                  let hours = number(i + 1, 2), let minutes = number(i + 4, 2) {
            offsetSeconds = (b[i] == 45 ? -1 : 1) * (hours * 3600 + minutes * 60)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "days_from_civil").
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
