import Foundation

/// How a listing changed between two fetches, like `PHFetchResultChangeDetails`, ready for a
/// collection view's batch update: delete `removedIndexes`, insert `insertedIndexes`, move each
/// of `moves`, then reload `changedIndexes`.
///
/// Assets are matched by `id` (their `url`): a file renamed is one removed and one inserted; a
/// file replaced in place (new size or modification time, so new versioned thumbnail URLs) is
/// changed; one whose `taken` changed its place in the order is moved.
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

    public static func == (a: ThumbdChangeDetails, b: ThumbdChangeDetails) -> Bool {
        a.fetchResultBeforeChanges == b.fetchResultBeforeChanges && a.fetchResultAfterChanges == b.fetchResultAfterChanges
            && a.removedIndexes == b.removedIndexes && a.insertedIndexes == b.insertedIndexes
            && a.changedIndexes == b.changedIndexes && a.moves.map(\.from) == b.moves.map(\.from)
            && a.moves.map(\.to) == b.moves.map(\.to)
    }
}
