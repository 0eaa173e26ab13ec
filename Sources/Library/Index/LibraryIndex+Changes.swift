import Rendering

/// What changed in the listing at one generation: kept in `ListingHistory`, for
/// `LibraryIndex.changes(since:order:in:)`.
struct ListingChange: Sendable {
    /// The generation this change made (`LibraryIndex.generation`).
    var generation: Int
    /// The records listed before it that are gone or replaced, each with the path relative to
    /// the root where it really was (nil when the index did not know yet: records loaded from
    /// the database before the first whole scan; then judged by its path alone).
    var removed: [(record: AssetRecord, realPath: DiskPath?)]
    /// The paths listed anew or replaced (their records are read as they are at the answer).
    var inserted: [DiskPath]
    /// The paths whose placeholder arrived, their records unchanged (`publishArrivedPlaceholders`):
    /// changed items of the feed, since their listing's `thumbhash` changed.
    var placeholders: [DiskPath] = []

    /// The paths it holds, for `ListingHistory`'s bound.
    var pathCount: Int { removed.count + inserted.count + placeholders.count }
}

/// The changes of the latest generations, bounded: at most `maxGenerations` changes and
/// `maxPaths` paths in all (a `cp -r` of 100,000 photos is one change of 100,000 paths); older
/// changes are let go and `base` moves up past them. What changed since a generation before
/// `base` (or one of an earlier run: each run's generations start at its opening time, µs) is
/// not known: the client lists again.
struct ListingHistory: Sendable {
    /// Most changes kept: 1,024.
    static let maxGenerations = 1024
    /// Most paths kept over all the changes kept: 100,000.
    static let maxPaths = 100_000

    /// The earliest generation the changes are known since.
    private(set) var base: Int
    /// The changes after `base`, oldest first, one per generation (each one more than the last).
    private(set) var changes: [ListingChange] = []
    /// The paths `changes` hold in all.
    private var paths = 0

    /// A history that knows the changes since `base` (none yet).
    init(base: Int = 0) {
        self.base = base
    }

    /// Keeps `change` (the change of the generation after the last one kept), letting the oldest
    /// go while over either bound.
    mutating func append(_ change: ListingChange) {
        changes.append(change)
        paths += change.pathCount
        var drop = 0
        while drop < changes.count && (changes.count - drop > Self.maxGenerations || paths > Self.maxPaths) {
            paths -= changes[drop].pathCount
            base = changes[drop].generation
            drop += 1
        }
        changes.removeFirst(drop)
    }

    /// The changes after `generation` up to `current` (the index's generation now), oldest
    /// first; nil when they are not all known: `generation` before `base`, or after `current`
    /// (not a generation of this run).
    func since(_ generation: Int, current: Int) -> ArraySlice<ListingChange>? {
        guard generation >= base, generation <= current else { return nil }
        guard let first = changes.first?.generation else { return changes[...] }
        return changes[min(changes.count, max(0, generation + 1 - first))...]
    }
}

/// An item of the listing and its place (0-based) in one listing, for `ListingChanges`.
public struct ListedAt: Sendable, Equatable {
    /// The item: as it was listed (a removed one) or as it is listed now.
    public var record: AssetRecord
    /// Its index in that listing.
    public var index: Int
    /// An item listed now: its `thumbhash` as the listing at the answer's `generation` carries it
    /// (base64; `LibraryIndex.listedThumbhash`); nil for none, and for a removed item.
    public var thumbhash: String? = nil
}

/// How the listing in one order and scope changed from one generation to the current one
/// (docs/API.md, "Change feed"), to apply as `PHFetchResultChangeDetails` is: remove the items
/// at `removed`'s indexes (in the listing at `since`), then insert `inserted`'s (indexes in the
/// listing now, ascending), then replace `changed`'s (indexes in the listing now). An item
/// replaced in place (another size or mtime, so new thumbnail versions) whose place stays is
/// changed; one whose place changed (its `taken` moved) is removed and inserted. An item whose
/// placeholder arrived since (the file unchanged) is changed too: its `thumbhash` is new.
public struct ListingChanges: Sendable, Equatable {
    /// The generation the changes are from.
    public var since: Int
    /// The generation they lead to: the index's when they were worked out.
    public var generation: Int
    /// How many items the listing holds now (in the scope).
    public var total: Int
    /// Items listed at `since` and not now (or not at the same place), ascending by index at `since`.
    public var removed: [ListedAt]
    /// Items listed now and not at `since` (or not at the same place), ascending by index now.
    public var inserted: [ListedAt]
    /// Items listed at both, at the same place, whose record or placeholder changed, ascending
    /// by index now.
    public var changed: [ListedAt]
}

extension LibraryIndex {
    /// Registers `observer`, called with the new generation after each change of the listing
    /// (on the thread of the scan or update that made it, outside the index's locks). For the
    /// change feed's waiters (`ThumbService`); observers are never removed.
    public func onGenerationChange(_ observer: @escaping @Sendable (Int) -> Void) {
        generationObservers.withLock { $0.append(observer) }
    }

    /// What changed in the listing in `order`, of `scope` (the same rule as `page`:
    /// `isListed`), from generation `since` to now; nil when that is not known
    /// (`ListingHistory`: too old, or not of this run): the client lists again. Costs a pass
    /// over the listing for a scope that is not the whole library (as `page` does), and
    /// O(k log n) for k paths changed.
    public func changes(since: Int, order: ListingOrder, in scope: LibraryScope = .whole) -> ListingChanges? {
        // Per path changed since `since`: what was listed there at `since` (the first change that
        // touched it says: it removed a record, or only inserted), and what is listed now.
        typealias Earlier = (record: AssetRecord, realPath: DiskPath?)?
        let read = state.withLock { s -> (generation: Int, earlier: [DiskPath: Earlier], now: [DiskPath: AssetRecord],
                                          placeheld: [AssetRecord], listing: [AssetRecord], realPaths: [DiskPath: DiskPath]?,
                                          placeholders: [DiskPath: StoredThumbhash])? in
            guard let after = s.history.since(since, current: s.generation) else { return nil }
            var earlier: [DiskPath: Earlier] = [:], placeheld: Set<DiskPath> = []
            for change in after {
                for removed in change.removed where earlier[removed.record.path] == nil {
                    earlier[removed.record.path] = .some(removed)
                }
                for path in change.inserted where earlier[path] == nil { earlier[path] = .some(nil) }
                placeheld.formUnion(change.placeholders)
            }
            var now: [DiskPath: AssetRecord] = [:]
            for path in earlier.keys { now[path] = s.records[path] }
            // Paths whose placeholder alone changed: listed now as they were then.
            let placeheldNow = placeheld.subtracting(earlier.keys).compactMap { s.records[$0] }
            return (s.generation, earlier, now, placeheldNow, order == .newest ? s.newest : s.oldest, s.knowsRealPaths ? s.realPaths : nil,
                    s.placeholders)
        }
        guard let read else { return nil }
        let listing = scope.isWhole ? read.listing : read.listing.filter { isListed($0.path, in: scope, realPaths: read.realPaths) }
        var gone: [AssetRecord] = [], new: [AssetRecord] = [], changed: [AssetRecord] = []
        for (path, earlier) in read.earlier {
            let was = earlier.flatMap { earlier in
                isListed(path, in: scope, realPaths: earlier.realPath.map { [path: $0] } ?? [:]) ? earlier.record : nil
            }
            let now = read.now[path].flatMap { isListed(path, in: scope, realPaths: read.realPaths) ? $0 : nil }
            switch (was, now) {
            case (nil, nil): continue
            case (let was?, nil): gone.append(was)
            case (nil, let now?): new.append(now)
            case (let was?, let now?):
                if was == now { continue }
                if was.listingKey == now.listingKey { changed.append(now) } else { gone.append(was); new.append(now) }
            }
        }
        changed += read.placeheld.filter { isListed($0.path, in: scope, realPaths: read.realPaths) }
        let before = { (a: AssetRecord, b: AssetRecord) -> Bool in a.listingKey.precedes(b.listingKey, in: order) }
        gone.sort(by: before)
        new.sort(by: before)
        changed.sort(by: before)
        // An item's index at `since`: the items before it now, less those new since, plus those gone.
        var removed: [ListedAt] = []
        for (rank, record) in gone.enumerated() {
            let now = Self.lowerBound(of: record, in: listing, by: before), newBefore = Self.lowerBound(of: record, in: new, by: before)
            removed.append(ListedAt(record: record, index: now - newBefore + rank))
        }
        func placed(_ records: [AssetRecord]) -> [ListedAt] {
            records.map { ListedAt(record: $0, index: Self.lowerBound(of: $0, in: listing, by: before),
                                   thumbhash: Self.listedThumbhash(of: $0, in: read.placeholders)) }
        }
        return ListingChanges(since: since, generation: read.generation, total: listing.count,
                              removed: removed, inserted: placed(new), changed: placed(changed))
    }
}
