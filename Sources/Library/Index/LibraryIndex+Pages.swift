import Rendering

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
    /// Each item's `thumbhash` as the listing at `generation` carries it (base64, RFC 4648 §4;
    /// nil: none published for the file as listed), in `items`' order
    /// (`LibraryIndex.listedThumbhash`).
    public var thumbhashes: [String?]
    /// The listing's generation when the page was read (`LibraryIndex.generation`).
    public var generation: Int
    /// Whether items follow the page's last one (false for an empty page).
    public var hasMore: Bool { !items.isEmpty && offset + items.count < total }
}

extension LibraryIndex {
    /// At most `limit` items of the listing in `order` from `start`, with the total, the
    /// generation they were read at and their placeholders published at or before it (never
    /// one only a later generation tells: `State.placeholders`, read with the generation);
    /// a negative `limit` counts as 0. Keyset starts cost
    /// O(log n) (a binary search of the sorted listing).
    /// `scope`: only the items in it (`LibraryScope.contains(path:realPath:)`, by where each
    /// file really is) are the listing: offsets, total and cursors count those alone; such a
    /// page costs O(n), a pass over the whole listing (and, for records loaded from the
    /// database before the first whole scan, a `realpath` of each under its folder). The whole
    /// library by default.
    public func page(order: ListingOrder, from start: ListingStart, limit: Int, in scope: LibraryScope = .whole) -> ListingPage {
        // The listing, its generation, its placeholders and where its linked files lead, read
        // together (shared, not copied).
        let (generation, listing, placeholders, realPaths, known) = state.withLock { s in
            (s.generation, order == .newest ? s.newest : s.oldest, s.placeholders, s.realPaths, s.knowsRealPaths)
        }
        let all = scope.isWhole ? listing
            : listing.filter { isListed($0.path, in: scope, realPaths: known ? realPaths : nil) }
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
        let items = Array(all[first..<end])
        return ListingPage(total: all.count, offset: first, items: items,
                           thumbhashes: items.map { Self.listedThumbhash(of: $0, in: placeholders) }, generation: generation)
    }

    /// Whether the listed file `path` is in `scope` (`LibraryScope.contains(path:realPath:)`, the
    /// one rule): judged by where it really is, from `realPaths` (the scans' map of files reached
    /// through symlinks; nil when not known yet, for records loaded from the database before the
    /// first whole scan: then the disk is asked, of the paths under the folder alone).
    func isListed(_ path: DiskPath, in scope: LibraryScope, realPaths: [DiskPath: DiskPath]?) -> Bool {
        let bytes = path.bytes
        if let realPaths { return scope.contains(path: bytes, realPath: (realPaths[path] ?? path).bytes) }
        return scope.contains(path: bytes, realPath: bytes)
            && realPath(of: path).map { scope.contains(path: bytes, realPath: $0.bytes) } ?? false
    }

    /// Where `path` (relative to the root) really is, asked of the disk (`Library.target(of:)`):
    /// nil when it is no file inside the root now.
    func realPath(of path: DiskPath) -> DiskPath? {
        guard case .file(let real, _) = library.target(of: library.rootPath.appending(path.bytes)) else { return nil }
        return DiskPath(bytes: real.bytes.dropFirst(library.rootPath.count + 1))
    }
}
