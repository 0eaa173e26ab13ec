import HTTP
@testable import Library
import Rendering
import Synchronization
import Testing
@testable import ThumbServer
import Thumbnails

/// The URL memo holds what its lifetime may still use, with time passed by hand: an entry is
/// found until it expires, and the entries of URLs no longer asked for are dropped within two
/// lifetimes, however many URLs came before (a memo emptied only when full grew with every new
/// URL: the soak's resident-memory growth, issue 33).
@Suite struct ResolvedKeyCacheTests {
    final class Clock: Sendable {
        let ns = Atomic<UInt64>(1_000_000_000)
        func pass(seconds: Double) { ns.wrappingAdd(UInt64(seconds * 1e9), ordering: .relaxed) }
    }

    static let grid = GridSpec.defaults[1]

    /// Stores `paths` in `memo` as photos of their own (no watch: a use `stat`s, so a lookup of
    /// a made-up path is `.unknown` even when held; `held` counts what the memo keeps).
    static func store(_ paths: [String], in memo: ResolvedKeyCache) {
        for path in paths {
            let identity = SourceIdentity(size: 1000, modifiedNanoseconds: 1)
            let key = CacheKey(assetPath: path, source: identity, spec: grid, format: .jpeg, quality: 80)
            let asset = ResolvedAsset(assetPath: DiskPath(path), absolutePath: DiskPath("/nowhere/" + path),
                                      realPath: DiskPath(path), requestedPath: DiskPath("/nowhere/" + path),
                                      identity: identity, device: 1, inode: 1)
            _ = memo.store(Substring(path), format: .jpeg, key: key, asset: asset, stamp: nil) { _, _, _ in HTTPHeaders() }
        }
    }

    /// (seconds passed since the 1,000 URLs were stored, URLs stored then, entries held after).
    static let steps: [(passed: Double, stored: Int, held: Int)] = [
        (0, 0, 1000),      // all held while they may be used
        (1.9, 0, 1000),    // within their 2 s lifetime
        (2.0, 1, 1001),    // a turn: the 1,000 are the previous generation, still seen
        (3.9, 0, 1001),
        (4.0, 1, 2),       // the next turn drops the 1,000 (expired since 2.0): 2 new ones held
        (10.0, 1, 1),      // two lifetimes without a store: both old generations go
    ]

    @Test func entriesOfURLsNoLongerAskedForAreDroppedWithinTwoLifetimes() {
        let clock = Clock()
        let memo = ResolvedKeyCache(watch: nil) { clock.ns.load(ordering: .relaxed) }
        Self.store((0..<1000).map { "photos/IMG_\($0).jpg" }, in: memo)
        var passed = 0.0
        for (n, step) in Self.steps.enumerated() {
            clock.pass(seconds: step.passed - passed)
            passed = step.passed
            Self.store((0..<step.stored).map { "later/\(n)-\($0).jpg" }, in: memo)
            #expect(memo.heldEntries == step.held, "at \(step.passed) s")
        }
    }

    @Test func aURLStoredAgainIsHeldOnce() {
        let clock = Clock()
        let memo = ResolvedKeyCache(watch: nil) { clock.ns.load(ordering: .relaxed) }
        Self.store(["a.jpg", "b.jpg"], in: memo)
        clock.pass(seconds: 2.5)   // a turn: both in the previous generation
        Self.store(["a.jpg"], in: memo)
        #expect(memo.heldEntries == 2)
    }
}
