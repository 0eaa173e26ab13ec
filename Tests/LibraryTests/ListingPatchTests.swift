@testable import Library
import Rendering
import Testing
import TestSupport

/// The sorted listings patched in place after an update (`LibraryIndex.patch`) and the
/// directory counts that tell an update what it covers (`State.entries(at:)`): checked against
/// a full sort and a recount, over random changes.
@Suite struct ListingPatchTests {
    /// Few distinct times, so that many records tie and are ordered by path.
    static func record(_ n: Int, time: Int64) -> AssetRecord {
        AssetRecord(path: DiskPath("d\(n % 7)/p\(n).jpg"), bytes: n, modifiedNanoseconds: 0, width: 3, height: 2,
                    taken: CaptureDate(epochMilliseconds: time * 1000, offsetMinutes: n % 3 * 60))
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7])
    func patchingGivesWhatSortingGives(seed: UInt64) {
        var random = SplitMix(state: seed)
        var records: [Int: AssetRecord] = [:]
        for n in 0..<400 { records[n] = Self.record(n, time: Int64.random(in: 0..<20, using: &random)) }
        var newest = records.values.sorted(by: AssetRecord.newestFirst)
        var oldest = records.values.sorted(by: AssetRecord.oldestFirst)
        for _ in 0..<30 {
            var old: [AssetRecord] = [], fresh: [AssetRecord] = []
            // Some removed, some replaced (another time), some new; the first and last included now and then.
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                guard let n = records.keys.randomElement(using: &random), old.allSatisfy({ $0.path != records[n]!.path }) else { continue }
                old.append(records[n]!)
                if Bool.random(using: &random) {
                    records[n] = Self.record(n, time: Int64.random(in: 0..<20, using: &random))
                    fresh.append(records[n]!)
                } else {
                    records[n] = nil
                }
            }
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let n = Int.random(in: 400..<100_000, using: &random)
                guard records[n] == nil else { continue }
                records[n] = Self.record(n, time: Int64.random(in: -1...20, using: &random))
                fresh.append(records[n]!)
            }
            LibraryIndex.patch(&newest, removing: old, inserting: fresh, by: AssetRecord.newestFirst)
            LibraryIndex.patch(&oldest, removing: old, inserting: fresh, by: AssetRecord.oldestFirst)
            #expect(newest == records.values.sorted(by: AssetRecord.newestFirst))
            #expect(oldest == records.values.sorted(by: AssetRecord.oldestFirst))
        }
    }

    @Test func patchingEmptiesAndRefillsAListing() {
        let a = Self.record(1, time: 5), b = Self.record(2, time: 5)
        var all = [a, b]
        LibraryIndex.patch(&all, removing: [b, a], inserting: [], by: AssetRecord.newestFirst)
        #expect(all.isEmpty)
        LibraryIndex.patch(&all, removing: [], inserting: [b, a], by: AssetRecord.newestFirst)
        #expect(all.map(\.path) == [a.path, b.path])
    }

    @Test func directoryCountsFollowEachChangeAndNameWhatAScopeCovers() {
        var s = LibraryIndex.State()
        let identity = SourceIdentity(size: 1, modifiedNanoseconds: 1)
        let photo = Self.record(0, time: 1)   // d0/p0.jpg
        s.set(photo.path, record: photo, nonImage: nil)
        s.set("d0/e/notes.txt", record: nil, nonImage: identity)
        s.set("d0/e/f/x.jpg", record: nil, nonImage: identity)
        s.set("top.jpg", record: nil, nonImage: identity)
        #expect(s.entriesUnder == ["d0": 3, "d0/e": 2, "d0/e/f": 1])
        // Set again, or from image to non-image: counted once.
        s.set(photo.path, record: nil, nonImage: identity)
        s.set(photo.path, record: photo, nonImage: nil)
        #expect(s.entriesUnder["d0"] == 3)

        let underE = s.entries(at: ["d0/e"])
        #expect(Set(underE.nonImages.keys) == ["d0/e/notes.txt", "d0/e/f/x.jpg"] && underE.records.isEmpty)
        let file = s.entries(at: ["d0/p0.jpg", "missing/dir"])
        #expect(Array(file.records.keys) == [photo.path] && file.nonImages.isEmpty)
        // "d0/e" is not "d0/e2": a sibling with the same prefix is not covered.
        s.set("d0/e2/y.jpg", record: nil, nonImage: identity)
        #expect(Set(s.entries(at: ["d0/e"]).nonImages.keys) == ["d0/e/notes.txt", "d0/e/f/x.jpg"])

        s.set("d0/e/notes.txt", record: nil, nonImage: nil)
        s.set("d0/e/f/x.jpg", record: nil, nonImage: nil)
        #expect(s.entriesUnder == ["d0": 2, "d0/e2": 1])
        var recounted = s
        recounted.countAll()
        #expect(recounted.entriesUnder == s.entriesUnder)
    }
}
