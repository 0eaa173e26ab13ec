import Foundation

/// How a listing changed between two fetches, like `PHFetchResultChangeDetails`, ready for a
/// collection view's batch update: delete `removedIndexes`, insert `insertedIndexes`, move each
/// of `moves`, then reload `changedIndexes`.
///
/// Assets are matched by `id` (their `url`): a file renamed is one removed and one inserted; a
/// file replaced in place (new size or modification time, so new versioned thumbnail URLs) is
/// changed. From the change feed (`ThumbdLibrary.changes`) the server gives the difference and
/// an asset whose `taken` changed its place is removed and inserted; between two whole listings
/// (`init(from:to:)`, after a 410 `generation_too_old`) it is moved.
public struct ThumbdChangeDetails: Sendable, Equatable {
    /// The result before.
    public var fetchResultBeforeChanges: ThumbdFetchResult
    /// The result after: what to show now.
    public var fetchResultAfterChanges: ThumbdFetchResult
    /// Indexes in the result before of the assets no longer listed (moved ones not included).
    public var removedIndexes: IndexSet
    /// Indexes in the result after of the assets newly listed (moved ones not included).
    public var insertedIndexes: IndexSet
    /// Indexes in the result after of the assets listed in both whose fields changed (new
    /// thumbnail versions, placeholder, size, date).
    public var changedIndexes: IndexSet
    /// Assets listed in both whose place changed: index before, index after.
    public var moves: [(from: Int, to: Int)]

    /// Whether any asset moved.
    public var hasMoves: Bool { !moves.isEmpty }
    /// Whether anything differs.
    public var hasChanges: Bool {
        !removedIndexes.isEmpty || !insertedIndexes.isEmpty || !changedIndexes.isEmpty || hasMoves
    }

    /// The difference from `before` to `after` (Swift's `CollectionDifference` of their ids,
    /// moves inferred).
    public init(from before: ThumbdFetchResult, to after: ThumbdFetchResult) {
        fetchResultBeforeChanges = before
        fetchResultAfterChanges = after
        let difference = after.assets.map(\.id).difference(from: before.assets.map(\.id)).inferringMoves()
        var removed = IndexSet(), inserted = IndexSet(), moves: [(from: Int, to: Int)] = []
        for change in difference {
            switch change {
            case .remove(let offset, _, let to):
                if let to { moves.append((from: offset, to: to)) } else { removed.insert(offset) }
            case .insert(let offset, _, let from):
                if from == nil { inserted.insert(offset) }
            }
        }
        self.removedIndexes = removed
        self.insertedIndexes = inserted
        self.moves = moves.sorted { $0.to < $1.to }
        var beforeByID: [String: ThumbdAsset] = [:]
        for asset in before.assets { beforeByID[asset.id] = asset }
        var changed = IndexSet()
        for (index, asset) in after.assets.enumerated() {
            if let old = beforeByID[asset.id], old != asset { changed.insert(index) }
        }
        self.changedIndexes = changed
    }

    /// The change feed's answer (docs/API.md, "Change feed") applied to `before`: removed at
    /// their indexes in `before`, inserted and changed at theirs after, no moves (the server
    /// gives an item whose place changed as removed and inserted). The server works out the
    /// difference; this only applies it.
    /// - Throws: `ThumbdError.invalidResponse` when the answer does not fit `before` (an index
    ///   out of range, or a removed or changed item that is not the one at its index).
    init(applying changes: ChangesWire, to before: ThumbdFetchResult, _ connection: ThumbdConnection) throws {
        var assets = before.assets
        for removed in changes.removed.reversed() {
            guard assets.indices.contains(removed.index), assets[removed.index].id == removed.url else {
                throw ThumbdError.invalidResponse("/assets/changes: no \(removed.url) at \(removed.index) to remove")
            }
            assets.remove(at: removed.index)
        }
        for inserted in changes.inserted {
            guard (0...assets.count).contains(inserted.index) else {
                throw ThumbdError.invalidResponse("/assets/changes: no index \(inserted.index) to insert at")
            }
            assets.insert(try inserted.item.asset(connection), at: inserted.index)
        }
        for changed in changes.changed {
            guard assets.indices.contains(changed.index), assets[changed.index].id == changed.item.url else {
                throw ThumbdError.invalidResponse("/assets/changes: no \(changed.item.url) at \(changed.index) to change")
            }
            assets[changed.index] = try changed.item.asset(connection)
        }
        guard assets.count == changes.total else {
            throw ThumbdError.invalidResponse("/assets/changes: \(assets.count) assets after the changes, not \(changes.total)")
        }
        fetchResultBeforeChanges = before
        fetchResultAfterChanges = ThumbdFetchResult(assets: assets, sort: before.sort, generation: changes.generation)
        removedIndexes = IndexSet(changes.removed.map(\.index))
        insertedIndexes = IndexSet(changes.inserted.map(\.index))
        changedIndexes = IndexSet(changes.changed.map(\.index))
        moves = []
    }

    public static func == (a: ThumbdChangeDetails, b: ThumbdChangeDetails) -> Bool {
        a.fetchResultBeforeChanges == b.fetchResultBeforeChanges && a.fetchResultAfterChanges == b.fetchResultAfterChanges
            && a.removedIndexes == b.removedIndexes && a.insertedIndexes == b.insertedIndexes
            && a.changedIndexes == b.changedIndexes && a.moves.map(\.from) == b.moves.map(\.from)
            && a.moves.map(\.to) == b.moves.map(\.to)
    }
}
