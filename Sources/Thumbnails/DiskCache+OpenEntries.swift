import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Disk hits as open, checked entry files to send with `sendfile` (see `OpenDiskEntry`), for
/// when the memory tier keeps nothing.
extension DiskCache {
    /// What `openWithoutWaiting` found.
    public enum OpenLookup: Sendable {
        case hit(OpenDiskEntry)
        case miss
        /// As `Lookup.wouldBlock`: nothing counted or changed.
        case wouldBlock
    }

    /// A hit as an open, checked entry to send from (for when the memory tier will not keep
    /// it): the first hit reads and checks the file like `readWithoutWaiting` (page cache only)
    /// and keeps it open; later hits cost one `stat` of its path, which must show the same file.
    /// Counts hits, not misses (as `readWithoutWaiting`). A descriptor shortage is `.wouldBlock`.
    public func openWithoutWaiting(_ key: CacheKey) -> OpenLookup {
        let digest = key.digest
        enum Known { case no, yes(write: Int, (entry: OpenDiskEntry, stamp: FileStamp)?) }
        let known = index.withLock { state -> Known in
            guard let write = state.lru.touch(digest) else { return .no }
            state.lru.hits += 1
            return .yes(write: write, state.open[digest])
        }
        guard case .yes(let write, let cached) = known else { return .miss }
        let path = path(for: digest)
        var st = stat()
        if let cached, stat(path, &st) == 0, FileStamp(st) == cached.stamp {
            stampRecency(cached.entry, digest: digest, modified: cached.stamp.modified)
            return .hit(cached.entry)
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)   // O_NONBLOCK: a FIFO planted here must not hang the thread
        if fd < 0 {
            let missing = errno == ENOENT
            index.withLock { state in
                state.lru.hits -= 1
                state.open[digest] = nil
            }
            if missing { forget(digest, write: write) }
            return missing ? .miss : .wouldBlock
        }
        // The file's identity before and after the check must agree, or a write that landed
        // during the check would be recorded as the checked state. No mtime stamp here (that
        // would change the identity): an entry due one is stamped and checked again next hit.
        var before = stat()
        let stable = fstat(fd, &before) == 0
        guard let found = Self.readEntry(fd, key: key.canonical, waiting: false, stampInterval: .max) else {
            close(fd)
            index.withLock { $0.lru.hits -= 1 }
            return .wouldBlock
        }
        afterCheckForTesting.withLock { $0 }?(path)
        guard let thumbnail = found, stable, fstat(fd, &st) == 0 else {
            close(fd)
            index.withLock { $0.lru.hits -= 1 }
            delete(digest, write: write, corrupt: true)
            return .miss
        }
        let entry = OpenDiskEntry(fd: fd, payloadOffset: Int(st.st_size) - thumbnail.bytes.count,
                                  payloadLength: thumbnail.bytes.count, format: thumbnail.format,
                                  width: thumbnail.width, height: thumbnail.height)
        let stamp = FileStamp(st)
        guard stamp == FileStamp(before) else {
            // Written to while checked: what the file holds now is unchecked. Let the blocking
            // path read and check it again (and serve the bytes it checked).
            index.withLock { $0.lru.hits -= 1 }
            return .wouldBlock   // `entry` closes the descriptor
        }
        // Kept open for the next hit, up to `openEntryLimit` (the table is emptied when full);
        // with a limit of 0, each hit opens and checks its file, and the response closes it.
        if !stampRecency(entry, digest: digest, modified: stamp.modified) && openEntryLimit > 0 {
            index.withLock { state in
                if state.open.count >= openEntryLimit { state.open.removeAll(keepingCapacity: true) }
                state.open[digest] = (entry, stamp)
            }
        }
        return .hit(entry)
    }

    /// Stamps an open entry's mtime with now when it is older than the recency resolution (the
    /// LRU order after a restart), and then drops it from the open table: its identity changed,
    /// and a write that lands between the stamp and a new `fstat` must not pass as checked, so
    /// the next hit checks it again (at most once per resolution per entry). True if stamped.
    @discardableResult
    private func stampRecency(_ entry: OpenDiskEntry, digest: String, modified: Int64) -> Bool {
        guard timespec.now(CLOCK_REALTIME).nanoseconds - modified >= recencyResolutionNanoseconds else { return false }
        _ = futimens(entry.fd, nil)
        index.withLock { state in
            if state.open[digest]?.entry === entry { state.open[digest] = nil }
        }
        return true
    }
}
