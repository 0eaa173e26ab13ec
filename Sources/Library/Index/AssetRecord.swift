import Rendering

/// One listed image of the library (docs/API.md, "Listing").
public struct AssetRecord: Sendable, Equatable {
    /// Asset path, `/`-separated, spelled as on disk byte for byte (NFD where the disk has NFD;
    /// perhaps not UTF-8): each file under its own name.
    public var path: DiskPath
    /// File size, bytes.
    public var bytes: Int
    /// Modification time, ns since the epoch.
    public var modifiedNanoseconds: Int64
    /// Size as displayed, after EXIF orientation, px.
    public var width: Int
    /// Height as displayed, after EXIF orientation, px.
    public var height: Int
    /// EXIF DateTimeOriginal (with OffsetTimeOriginal, else UTC), or the modification time.
    public var taken: CaptureDate
    /// A video's duration from its container, ms (0 when it does not say); nil for a photo
    /// (docs/API.md: `type` and `duration_ms`).
    public var durationMilliseconds: Int? = nil

    /// Whether the asset is a video (`"type": "video"` in the listing).
    public var isVideo: Bool { durationMilliseconds != nil }

    /// The modification time, UTC.
    public var modified: CaptureDate {
        CaptureDate(epochMilliseconds: modifiedNanoseconds / 1_000_000)
    }

    /// Listing order: `taken` descending as an instant (the offset it was recorded in plays no
    /// part: 21:30+09:00 and 12:30Z are one instant, a tie), ties by path ascending (byte order).
    /// A strict weak ordering, as `sort(by:)` needs (`ListingKey.precedes`).
    static func newestFirst(_ a: AssetRecord, _ b: AssetRecord) -> Bool {
        a.listingKey.precedes(b.listingKey, in: .newest)
    }

    /// Listing order: `taken` ascending as an instant, ties by path ascending (byte order).
    static func oldestFirst(_ a: AssetRecord, _ b: AssetRecord) -> Bool {
        a.listingKey.precedes(b.listingKey, in: .oldest)
    }
}

/// The two orders of `GET /assets?sort=`.
public enum ListingOrder: String, Sendable {
    case newest, oldest
}
