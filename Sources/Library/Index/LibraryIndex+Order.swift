import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The two sorted listings kept beside the records: merged after a few changes, sorted anew
/// after many.
extension LibraryIndex {
    /// Brings the sorted listings in line with `records` after the records at `changed` were
    /// set or removed: merged in, in one pass over each listing, when they are few against it
    /// (an update from the watch, a rescan that found little), sorted anew otherwise.
    static func reorder(_ s: inout State, changed: Set<DiskPath>) {
        guard changed.count * 8 < s.newest.count else { return sort(&s) }
        let fresh = changed.compactMap { s.records[$0] }
        s.newest = merge(s.newest.filter { !changed.contains($0.path) }, fresh.sorted(by: AssetRecord.newestFirst),
                         by: AssetRecord.newestFirst)
        s.oldest = merge(s.oldest.filter { !changed.contains($0.path) }, fresh.sorted(by: AssetRecord.oldestFirst),
                         by: AssetRecord.oldestFirst)
    }

    /// Two lists sorted by `before`, merged into one (stable: `a`'s first on ties).
    static func merge(_ a: [AssetRecord], _ b: [AssetRecord], by before: (AssetRecord, AssetRecord) -> Bool) -> [AssetRecord] {
        var merged: [AssetRecord] = []
        merged.reserveCapacity(a.count + b.count)
        var i = a.startIndex, j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            if before(b[j], a[i]) { merged.append(b[j]); j += 1 } else { merged.append(a[i]); i += 1 }
        }
        merged.append(contentsOf: a[i...])
        merged.append(contentsOf: b[j...])
        return merged
    }


    static func sort(_ s: inout State) {
        let all = Array(s.records.values)
        s.newest = all.sorted(by: AssetRecord.newestFirst)
        s.oldest = all.sorted(by: AssetRecord.oldestFirst)
    }
}
