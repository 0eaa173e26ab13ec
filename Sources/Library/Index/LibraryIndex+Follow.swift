import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeping the index current: updates of the paths the library watch names (`update`), the
/// loop that follows the watch (`follow`), and polling without one (`startWatching`).
extension LibraryIndex {

    /// Brings the records at and under `paths` (relative to the root, as on disk) up to date,
    /// as `rescan` does for the whole tree: a file is read again when its size or mtime
    /// changed, a directory's subtree is walked, and what is gone (a file, a directory with all
    /// under it) is dropped. For the changes the library watch reports
    /// (`LibraryWatch.takeChanges`); the empty path is the whole tree. A path with a dot-file
    /// on the way is ignored (nothing under it is listed).
    @discardableResult
    public func update(_ paths: [DiskPath]) -> ScanSummary {
        let links = state.withLock { $0.linkedDirectories }
        let scopes = Self.outermost(Self.withAliases(paths, links: links))
        guard !scopes.isEmpty else { return ScanSummary() }
        return scanLock.withLock { _ in scanNow(scopes: scopes) }
    }

    /// `paths` and, for each under the target of a symlinked directory, the same path under
    /// the link (links within links followed, a few deep).
    static func withAliases(_ paths: [DiskPath], links: [DiskPath: DiskPath]) -> [DiskPath] {
        guard !links.isEmpty else { return paths }
        var all = Set(paths)
        var round = paths
        for _ in 0..<4 {
            var next: [DiskPath] = []
            for path in round {
                for (link, target) in links where path == target || path.isInside(target) {
                    let alias = DiskPath(bytes: link.bytes + path.bytes.dropFirst(target.bytes.count))
                    if all.insert(alias).inserted { next.append(alias) }
                }
            }
            if next.isEmpty { break }
            round = next
        }
        return Array(all)
    }

    /// `paths` without those inside another of them.
    static func outermost(_ paths: [DiskPath]) -> Set<DiskPath> {
        let all = Set(paths)
        if all.contains(DiskPath(bytes: [])) { return [DiskPath(bytes: [])] }
        let bytes = Set(all.map { ByteKey($0.bytes) })   // once: a set per path made this quadratic (a cp -r of 10,000)
        return all.filter { !Self.hasAncestor($0, in: bytes) }
    }

    /// Whether a directory on the way to `path` (a proper prefix ending at a `/`) is in `set`
    /// (paths' bytes): a lookup per `/`, no allocation.
    static func hasAncestor(_ path: DiskPath, in set: Set<ByteKey>) -> Bool {
        let bytes = path.bytes
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "/"), set.contains(ByteKey(bytes[bytes.startIndex..<i])) { return true }
            i += 1
        }
        return false
    }

    /// Keeps the index current from `feed` (the library watch): rescans now on a background
    /// queue; then updates the paths the feed reports (`update`), `settleSeconds` after it
    /// says something changed so that a burst (a `cp -r`) is read in few updates, or rescans the
    /// whole tree when the feed lost track; rescans the whole tree every `pollSeconds` while
    /// the feed does not see everything, and every `sweepSeconds` regardless (for what no
    /// watch sees: see `LibraryWatch`). Stops when the index is released.
    /// - Parameters:
    ///   - pollSeconds: the rescan interval while the feed is blind (`index_rescan_seconds`).
    ///   - sweepSeconds: the safety sweep's interval (`index_sweep_seconds`); 0: none.
    ///   - settleSeconds: how long changes are gathered before an update (default 50 ms).
    public func follow(_ feed: LibraryChangeFeed, pollSeconds: Double, sweepSeconds: Double,
                       settleSeconds: Double = 0.05) {
        let pending = Mutex(false)
        feed.onChanges { [weak self] in
            guard let self, pending.withLock({ was in defer { was = true }; return !was }) else { return }
            watchQueue.asyncAfter(deadline: .now() + settleSeconds) { [weak self] in
                pending.withLock { $0 = false }
                guard let self else { return }
                if let paths = feed.takeChanges() { update(paths) } else { rescan() }
            }
        }
        watchQueue.async { [weak self] in
            guard let self else { return }
            _ = feed.takeChanges()   // what happened before: this scan covers it
            rescan()
            tick(feed, pollSeconds: pollSeconds, sweepSeconds: sweepSeconds, lastSweep: DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// One round of `follow`'s timer: a rescan when the feed is blind or the sweep is due.
    func tick(_ feed: LibraryChangeFeed, pollSeconds: Double, sweepSeconds: Double, lastSweep: UInt64) {
        let period = max(0.05, pollSeconds)
        watchQueue.asyncAfter(deadline: .now() + period) { [weak self] in
            guard let self else { return }
            var lastSweep = lastSweep
            let now = DispatchTime.now().uptimeNanoseconds
            let sweepDue = sweepSeconds > 0 && Double(now &- lastSweep) / 1e9 >= sweepSeconds
            if !feed.seesEverything || sweepDue {
                _ = feed.takeChanges()
                rescan()
                if sweepDue { lastSweep = now }
            }
            tick(feed, pollSeconds: pollSeconds, sweepSeconds: sweepSeconds, lastSweep: lastSweep)
        }
    }

    /// Rescans now on a background queue, then every `interval` seconds (default 2 s).
    /// Watching stops when the index is released (the timer holds it weakly).
    public func startWatching(interval: Double = 2) {
        watchQueue.async { [weak self] in
            guard let self else { return }
            rescan()
            watchQueue.asyncAfter(deadline: .now() + interval) { [weak self] in self?.startWatching(interval: interval) }
        }
    }
}
