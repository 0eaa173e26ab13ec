import Console
import Dispatch
import Foundation
import Library
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// Keeping the cache's directories while the server runs: a tmp cleaner, or a user clearing the
/// cache, may remove `entries/`, `tmp/` or the whole cache directory under a running server.
/// Every write would then fail, and the index would go on counting entries that are gone.
///
/// Each write (before it writes, and again when it meets ENOENT), `/stats`, `/healthz` and each
/// prefetch job check the three directories (three `stat`s, comparing device and inode with
/// what was claimed). When one is
/// gone or replaced, the cache is claimed again by the start-up rules (`CacheDirectory.reclaim`:
/// made only at the configured path, inside a directory that still exists, apart from the
/// library, tagged as at first start; a directory that is not provably thumbd's is never
/// adopted), the index drops every entry whose file is gone, and the fault is counted
/// (`directoryFaults`) and said once through `warn`. While the cache cannot be claimed, `fault`
/// says why, writes fail at once (counted in `writeErrors`) and try again at most once per
/// `faultRecheckNanoseconds` (`Recovery.throttled`: a stream of renders does not repeat the
/// claim for each), while `/healthz`, `/stats` and a prefetch's start try it at each call
/// (`Recovery.now`), so that their answer follows a mend at once; the recovery is said once too.
extension DiskCache {
    /// When a check that finds the cache still at fault tries to claim it again.
    public enum Recovery: Sendable {
        /// At most once per `faultRecheckNanoseconds` (1 s by default): each write's check.
        case throttled
        /// At this call: an answer about the cache's health (`/healthz`, `/stats`, a prefetch's start).
        case now
    }

    /// What the disk tier knows of its directories; behind `directories`.
    struct Directories {
        /// The cache directory's, `entries/`'s and `tmp/`'s identities as last claimed.
        var identities: [DirectoryIdentity?]
        /// Why the disk tier cannot keep thumbnails now (a sentence); nil while it can.
        var fault: String?
        /// Faults found since start (`Statistics.directoryFaults`).
        var faults = 0
        /// When the cache was last claimed again, or tried (uptime ns).
        var lastAttempt: UInt64 = 0
        /// The shards (`entries/00` … `entries/ff`) seen at the last `checkDirectoriesAndShards`,
        /// by inode: thumbd makes them and never removes one, so one gone (or made again) since
        /// was removed under the server.
        var shards: [String: UInt64] = [:]
    }

    /// The default `warn`: one line on stderr, `thumbd: ` first.
    public static let standardErrorWarning: @Sendable (String) -> Void = { message in
        Console.warn(message)
    }

    /// Checks that the cache directory, `entries/` and `tmp/` are the ones claimed, and when one
    /// is gone or replaced claims the cache again (see the extension's summary); while it is at
    /// fault, tries that again as `recovery` says (`.throttled`, a write's, by default). Returns
    /// why the disk tier cannot keep thumbnails (`Statistics.fault`), or nil when it can. Three
    /// `stat`s when nothing changed; a recovery reads the directory and `stat`s every indexed
    /// entry. Blocks on file I/O: call it off the event loops.
    @discardableResult
    public func checkDirectories(_ recovery: Recovery = .throttled) -> String? {
        ThreadRole.assertNot(.eventLoop, "DiskCache.checkDirectories blocks on file I/O")
        let seen = Self.identities(directory)
        if directories.withLock({ $0.fault == nil && $0.identities == seen }) { return nil }
        return recover(recovery)
    }

    /// Checks the directories (`checkDirectories`), then the shards: when one seen at the last
    /// check is gone (`rm -rf entries/*` empties `entries/` and keeps it), the index drops every
    /// entry whose file is gone, so that `/stats` counts what is there. Up to 256 `lstat`s: for
    /// `/stats`, `/healthz` and a prefetch's start, not for each write; a fault's recovery is
    /// tried at once (`Recovery.now`). Returns what `checkDirectories` does. Blocks on file I/O:
    /// call it off the event loops.
    @discardableResult
    public func checkDirectoriesAndShards() -> String? {
        if let fault = checkDirectories(.now) { return fault }
        var present: [String: UInt64] = [:]
        var st = stat()
        for shard in (0..<256).map({ ($0 < 16 ? "0" : "") + String($0, radix: 16) })
        where lstat(entriesDirectory + "/" + shard, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            present[shard] = UInt64(st.st_ino)
        }
        let removed = directories.withLock { state -> Bool in
            defer { state.shards = present }
            return state.shards.contains { present[$0.key] != $0.value }
        }
        if removed {
            let dropped = dropEntriesThatAreGone()
            if dropped > 0 { warn("disk cache: \(dropped) entries were removed from \(entriesDirectory) while the server ran") }
        }
        return nil
    }

    /// The cache directory's (links followed, as `claim` does), `entries/`'s and `tmp/`'s
    /// (never links) identities; nil for one that is not there or not a directory.
    static func identities(_ directory: String) -> [DirectoryIdentity?] {
        [DirectoryIdentity(of: DiskPath(directory))] + ["/entries", "/tmp"].map { name -> DirectoryIdentity? in
            var st = stat()
            guard lstat(directory + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
            return DirectoryIdentity(st)
        }
    }

    /// Claims the cache again, one recovery at a time (the lock is held through it, so writes
    /// that met the same fault wait, then find it mended).
    private func recover(_ recovery: Recovery) -> String? {
        directories.withLock { state -> String? in
            let seen = Self.identities(directory)
            if state.fault == nil && state.identities == seen { return nil }   // mended while this one waited
            let now = DispatchTime.now().uptimeNanoseconds
            if case .throttled = recovery, state.fault != nil, now &- state.lastAttempt < faultRecheckNanoseconds {
                return state.fault
            }
            state.lastAttempt = now
            let starts = state.fault == nil
            if starts { state.faults += 1 }
            let what = Self.describe(seen: seen, claimed: state.identities, directory: directory)
            do {
                try CacheDirectory.reclaim(directory, library: libraryRoot)
            } catch {
                let dropped = dropEntriesThatAreGone()
                let fault = "the disk cache \(directory) cannot keep thumbnails: \(what), and \(error)"
                if starts {
                    warn("disk cache: \(fault); \(dropped) entries were gone; thumbnails are rendered again and not kept on disk "
                        + "until it can be made again (tried again at most once a second)")
                }
                state.fault = fault
                return fault
            }
            state.identities = Self.identities(directory)
            let dropped = dropEntriesThatAreGone()
            warn(starts ? "disk cache: \(what) while the server ran; made it again (\(dropped) entries were gone)"
                        : "disk cache: \(directory) is usable again (\(dropped) more entries were gone)")
            state.fault = nil
            return nil
        }
    }

    /// What changed, for the sentence said: which of the three are gone or replaced.
    private static func describe(seen: [DirectoryIdentity?], claimed: [DirectoryIdentity?], directory: String) -> String {
        let names = [directory, directory + "/entries", directory + "/tmp"]
        if seen[0] == nil { return "\(directory) was removed" }
        let changed = (0..<3).filter { seen[$0] != claimed[$0] }
        guard !changed.isEmpty else { return "\(directory) could not be used" }
        return changed.map { names[$0] + (seen[$0] == nil ? " was removed" : " was replaced") }.joined(separator: ", ")
    }

    /// Drops from the index every entry whose file is gone, and returns how many. The files are
    /// looked at outside the lock; an entry written again since (another write number) stays.
    private func dropEntriesThatAreGone() -> Int {
        let indexed = index.withLock { state in state.lru.index.keys.map { ($0, state.lru.peek($0) ?? 0) } }
        var st = stat()
        let gone = indexed.filter { lstat(path(for: $0.0), &st) != 0 && (errno == ENOENT || errno == ENOTDIR) }
        return index.withLock { state in
            var dropped = 0
            for (digest, write) in gone where state.lru.peek(digest) == write {
                state.lru.remove(digest)
                state.open[digest] = nil
                dropped += 1
            }
            return dropped
        }
    }
}
