import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The two sorted listings kept beside the records: patched after a few changes, sorted anew
/// after many.
extension LibraryIndex {
    /// Brings the sorted listings in line with `records` after `removing` (records that were
    /// listed and are gone or replaced) and `inserting` (their replacements and new ones):
    /// patched in place when they are few against the listing (an update from the watch, a
    /// rescan that found little), sorted anew otherwise.
    static func reorder(_ s: inout State, removing old: [AssetRecord], inserting fresh: [AssetRecord]) {
        guard !old.isEmpty || !fresh.isEmpty else { return }
        guard (old.count + fresh.count) * 8 < s.newest.count else { return sort(&s) }
        patch(&s.newest, removing: old, inserting: fresh, by: AssetRecord.newestFirst)
        patch(&s.oldest, removing: old, inserting: fresh, by: AssetRecord.oldestFirst)
    }

    /// Removes `old` from `all` (sorted by `before`, a strict total order: ties go by path)
    /// and inserts `fresh`, keeping it sorted: each found by binary search, and the records in
    /// between moved as bytes, a run at a time (`moveInitialize`, memmove). Copying the listing
    /// instead retained and released each of its records: at 100,000 records, a quarter of an
    /// update's time in a `cp -r` (perf).
    static func patch(_ all: inout [AssetRecord], removing old: [AssetRecord], inserting fresh: [AssetRecord],
                      by before: (AssetRecord, AssetRecord) -> Bool) {
        let drop = Set(old.compactMap { record -> Int? in
            let i = lowerBound(of: record, in: all, by: before)
            return i < all.endIndex && all[i].path == record.path ? i : nil
        }).sorted()
        if let filler = all.first, !drop.isEmpty {
            all.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                var write = drop[0]
                for (n, gone) in drop.enumerated() {
                    (base + gone).deinitialize(count: 1)
                    let end = n + 1 < drop.count ? drop[n + 1] : buffer.count
                    (base + write).moveInitialize(from: base + gone + 1, count: end - gone - 1)
                    write += end - gone - 1
                }
                // The freed tail holds copies of one record until `removeLast` releases them.
                (base + write).initialize(repeating: filler, count: buffer.count - write)
            }
            all.removeLast(drop.count)
        }
        let add = fresh.sorted(by: before)
        guard let filler = add.first else { return }
        let positions = add.map { lowerBound(of: $0, in: all, by: before) }
        let oldCount = all.count
        all.append(contentsOf: repeatElement(filler, count: add.count))
        all.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            (base + oldCount).deinitialize(count: add.count)
            var end = oldCount   // records [positions[j], end) move up by j + 1
            for j in add.indices.reversed() {
                (base + positions[j] + j + 1).moveInitialize(from: base + positions[j], count: end - positions[j])
                (base + positions[j] + j).initialize(to: add[j])
                end = positions[j]
            }
        }
    }

    /// The first index of `all` (sorted by `before`) whose record does not precede `record`.
    static func lowerBound(of record: AssetRecord, in all: [AssetRecord], by before: (AssetRecord, AssetRecord) -> Bool) -> Int {
        var low = all.startIndex, high = all.endIndex
        while low < high {
            let mid = (low + high) / 2
            if before(all[mid], record) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    static func sort(_ s: inout State) {
        let all = Array(s.records.values)
        s.newest = all.sorted(by: AssetRecord.newestFirst)
        s.oldest = all.sorted(by: AssetRecord.oldestFirst)
    }
}
