/// Where a page of the listing starts (docs/API.md, "Listing").
public enum ListingStart: Sendable, Equatable {
    /// At this many items from the top (offset paging); past the end, nothing.
    case offset(Int)
    /// At the first item after this key in the page's order (keyset paging): the same item
    /// whatever was added or removed before it meanwhile; a key whose item is gone still
    /// continues from where that item stood.
    case after(ListingKey)
}

/// One page of the listing, read at one instant.
public struct ListingPage: Sendable {
    /// Images listed.
    public var total: Int
    /// How many items of the listing come before the page's first (its offset now).
    public var offset: Int
    /// The page's items, in its order.
    public var items: [AssetRecord]
    /// The listing's generation when the page was read (`LibraryIndex.generation`).
    public var generation: Int
    /// Whether items follow the page's last one (false for an empty page).
    public var hasMore: Bool { !items.isEmpty && offset + items.count < total }
}

extension LibraryIndex {
    /// At most `limit` items of the listing in `order` from `start`, with the total and the
    /// generation they were read at; a negative `limit` counts as 0. Keyset starts cost
    /// O(log n) (a binary search of the sorted listing).
    /// `under`: a folder's path bytes with a trailing `/` (`alice/`): only the items whose path
    /// starts with it are the listing (offsets, total and cursors count those alone); such a
    /// page costs O(n), a pass over the whole listing. Empty (the whole library) by default.
    public func page(order: ListingOrder, from start: ListingStart, limit: Int, under prefix: [UInt8] = []) -> ListingPage {
        var (generation, all) = snapshot(order)
        if !prefix.isEmpty {
            all = all.filter { $0.path.bytes.count > prefix.count && $0.path.bytes.starts(with: prefix) }
        }
        let first: Int
        switch start {
        case .offset(let offset):
            first = min(max(0, offset), all.count)
        case .after(let key):
            // The first item `key` precedes: every item before it is at or before `key`.
            var low = 0, high = all.count
            while low < high {
                let middle = low + (high - low) / 2
                if key.precedes(all[middle].listingKey, in: order) { high = middle } else { low = middle + 1 }
            }
            first = low
        }
        let end = first + min(all.count - first, max(0, limit))
        return ListingPage(total: all.count, offset: first, items: Array(all[first..<end]), generation: generation)
    }
}
