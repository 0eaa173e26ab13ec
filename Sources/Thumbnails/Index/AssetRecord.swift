/// One listed image of the library (API.md, "Listing").
public struct AssetRecord: Sendable, Equatable {
    /// Asset path, NFC, `/`-separated.
    public var path: String
    /// File size, bytes.
    public var bytes: Int
    /// Modification time, ns since the epoch.
    public var modifiedNanoseconds: Int64
    /// Size as displayed, after EXIF orientation, px.
    public var width: Int
    public var height: Int
    /// EXIF DateTimeOriginal (with OffsetTimeOriginal, else UTC), or the modification time.
    public var taken: CaptureDate

    /// The modification time, UTC.
    public var modified: CaptureDate {
        CaptureDate(epochMilliseconds: modifiedNanoseconds / 1_000_000)
    }

    /// Listing order: `taken` descending, ties by path ascending.
    static func newestFirst(_ a: AssetRecord, _ b: AssetRecord) -> Bool {
        a.taken != b.taken ? a.taken > b.taken : a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
    }

    /// Listing order: `taken` ascending, ties by path ascending.
    static func oldestFirst(_ a: AssetRecord, _ b: AssetRecord) -> Bool {
        a.taken != b.taken ? a.taken < b.taken : a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
    }
}

/// The two orders of `GET /assets?sort=`.
public enum ListingOrder: String, Sendable {
    case newest, oldest
}
