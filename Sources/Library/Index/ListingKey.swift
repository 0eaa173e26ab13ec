import Rendering

/// Where an item stands in the listing (docs/API.md, "Listing"): its capture instant, then its
/// path as the tie-break. What a keyset cursor carries: the items after a key are the same
/// items however many were added or removed before it, and a key whose item is gone still
/// marks the place it stood.
public struct ListingKey: Sendable, Equatable {
    /// `taken` as an instant, ms since the epoch (UTC); the offset it was recorded in does not order.
    public var takenMilliseconds: Int64
    /// The asset path, as on disk byte for byte, compared in byte order.
    public var path: DiskPath

    /// The key of an item taken at `takenMilliseconds` (ms since the epoch) with path `path`.
    public init(takenMilliseconds: Int64, path: DiskPath) {
        self.takenMilliseconds = takenMilliseconds
        self.path = path
    }

    /// Whether an item at `self` comes before one at `other` in `order`: `taken` descending
    /// (`newest`) or ascending (`oldest`), ties by path ascending in both. A strict weak
    /// ordering (a total order: no two assets share a path).
    public func precedes(_ other: ListingKey, in order: ListingOrder) -> Bool {
        let (x, y) = (takenMilliseconds, other.takenMilliseconds)
        guard x == y else { return order == .newest ? x > y : x < y }
        return path < other.path
    }
}

extension AssetRecord {
    /// This item's place in the listing.
    public var listingKey: ListingKey { ListingKey(takenMilliseconds: taken.epochMilliseconds, path: path) }
}
