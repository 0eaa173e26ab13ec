import CLinux
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// Reading an entry: a lookup in the index, then its file read from the page cache only or
/// waiting for the disk; a file found corrupt or missing leaves the index.
extension DiskCache {
    /// The thumbnail stored for `key`, or nil (a miss). A stored file that fails the checks is
    /// deleted and counted in `corrupt`. A hit becomes most recently used. Blocks on file I/O.
    public func read(_ key: CacheKey) -> Thumbnail? {
        ThreadRole.assertNot(.eventLoop, "DiskCache.read blocks on file I/O")
        if case .hit(let thumbnail) = lookUp(key, waiting: true, countingMisses: true) { return thumbnail }
        return nil
    }

    /// `read`, but counting neither a hit nor a miss: a donor for a smaller grid
    /// (`ThumbnailPipeline.derivationDonor`) is not a request for it. Blocks on file I/O.
    public func peek(_ key: CacheKey) -> Thumbnail? {
        if case .hit(let thumbnail) = lookUp(key, waiting: true, countingMisses: false, countingHits: false) { return thumbnail }
        return nil
    }

    /// `read`, but from the page cache only (`preadv2(2)` with `RWF_NOWAIT`), so an event-loop
    /// thread can serve a warm entry itself: `.wouldBlock` when that would wait for the disk.
    /// Opening the file can still touch the disk for an inode not in memory (as nginx's reads do).
    /// A hit is counted; a miss is not (a request that joins a render under way is no disk
    /// miss): the caller that acts on it calls `countMissIfAbsent`.
    public func readWithoutWaiting(_ key: CacheKey) -> Lookup {
        lookUp(key, waiting: false, countingMisses: false)
    }

    /// Counts a miss and returns true when no entry for `key` is indexed; false (nothing
    /// counted) when one is, e.g. written since an earlier look.
    public func countMissIfAbsent(_ key: CacheKey) -> Bool {
        index.withLock { state in
            guard state.lru.peek(key.digest) == nil else { return false }
            state.lru.misses += 1
            return true
        }
    }

    /// One lock on the way in (a hit is counted, and made most recent, at once), a second only
    /// when the file turns out missing, corrupt or not in the page cache.
    private func lookUp(_ key: CacheKey, waiting: Bool, countingMisses: Bool, countingHits: Bool = true) -> Lookup {
        let hit = countingHits ? 1 : 0   // added now, taken back if the entry cannot be served
        let known = index.withLock { state -> Int? in
            guard let write = state.lru.touch(key.digest) else {
                if countingMisses { state.lru.misses += 1 }
                return nil
            }
            state.lru.hits += hit
            return write
        }
        guard let write = known else { return .miss }
        let path = path(for: key.digest)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)   // O_NONBLOCK: a FIFO planted here must not hang the thread
        if fd < 0 && (errno == EMFILE || errno == ENFILE) {
            // No descriptor free: nothing is known about the file, which stays indexed (a
            // blocking read renders instead, and that render meets the same shortage or not).
            index.withLock { state in
                state.lru.hits -= hit
                if countingMisses && waiting { state.lru.misses += 1 }
            }
            return waiting ? .miss : .wouldBlock
        }
        var thumbnail: Thumbnail?
        if fd >= 0 {
            guard let found = Self.readEntry(fd, key: key.canonical, waiting: waiting,
                                             stampInterval: recencyResolutionNanoseconds) else {
                close(fd)
                index.withLock { $0.lru.hits -= hit }
                return .wouldBlock
            }
            thumbnail = found
            close(fd)
        }
        guard let thumbnail else {
            index.withLock { state in
                state.lru.hits -= hit
                if countingMisses { state.lru.misses += 1 }
            }
            if fd >= 0 { delete(key.digest, write: write, corrupt: true) } else { forget(key.digest, write: write) }
            return .miss
        }
        return .hit(thumbnail)
    }

    /// Reads and checks the entry open at `fd`: head and payload in one `preadv2`, the payload
    /// straight into the thumbnail's own array. `.some(nil)` for a file that is not an intact
    /// entry; nil when `waiting` is false and the bytes are not all in the page cache.
    /// A good entry's mtime is stamped with now (the LRU order after a restart) when it is more
    /// than `stampInterval` ns old, so steady hits on one entry do not write its inode each time.
    static func readEntry(_ fd: Int32, key: String, waiting: Bool, stampInterval: Int64) -> Thumbnail?? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return .some(nil) }
        let size = Int(st.st_size)
        let headSize = DiskEntry.headSize(key: key)
        guard size > headSize else { return .some(nil) }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: headSize, alignment: 8)
        defer { head.deallocate() }
        var blocked = false
        let payload = [UInt8](unsafeUninitializedCapacity: size - headSize) { body, count in
            var done = 0
            while done < size {
                let n: Int
                if done == 0 {
                    n = clinux_read_two(fd, head.baseAddress, headSize, body.baseAddress, size - headSize, waiting ? 0 : 1)
                } else if waiting {
                    n = done < headSize
                        ? pread(fd, head.baseAddress! + done, headSize - done, off_t(done))
                        : pread(fd, body.baseAddress! + (done - headSize), size - done, off_t(done))
                } else {
                    blocked = true   // a partial page-cache read: the rest is on disk
                    break
                }
                if n < 0 && errno == EINTR { continue }
                // EAGAIN: not all in the page cache; EOPNOTSUPP: a file system without
                // RWF_NOWAIT (tmpfs). Either way the blocking read decides.
                if n < 0 && !waiting { blocked = true; break }
                if n <= 0 { break }
                done += n
            }
            count = done == size ? size - headSize : 0
        }
        if blocked { return nil }
        guard payload.count == size - headSize,
              let thumbnail = DiskEntry.decode(head: UnsafeRawBufferPointer(head), payload: payload, key: key)
        else { return .some(nil) }
        if timespec.now(CLOCK_REALTIME).nanoseconds - st.st_mtim.nanoseconds >= stampInterval { futimens(fd, nil) }
        return .some(thumbnail)
    }
}

extension DiskCache {
    /// Deletes `digest`'s entry, index and file, when it is still the one `write` made (not
    /// written again since it was looked up, nor being written or deleted now: a newer file at
    /// its name belongs to its own write). Its bytes count, in `pendingUnlink`, until the unlink
    /// returned, and for good when the file could not be deleted. `corrupt`: count it in
    /// `Statistics.corrupt` (a file that failed the checks).
    func delete(_ digest: String, write: Int, corrupt: Bool) {
        let cost = index.withLock { state -> Int? in
            state.open[digest] = nil
            guard state.lru.peek(digest) == write, !state.busy.contains(digest),
                  let cost = state.lru.remove(digest) else { return nil }
            state.busy.insert(digest)
            state.pendingUnlink += cost
            if corrupt { state.corrupt += 1 }
            return cost
        }
        guard let cost else { return }
        let gone = removeDropped(path(for: digest))
        index.withLock { state in
            state.busy.remove(digest)
            if gone { state.pendingUnlink -= cost }
        }
    }

    /// Drops `digest`'s entry from the index when it is still the one `write` made and its file
    /// is gone (found missing); a file of thumbd's form found there after all stays counted.
    func forget(_ digest: String, write: Int) {
        let left = isEntryLeft(path(for: digest))
        index.withLock { state in
            state.open[digest] = nil
            guard state.lru.peek(digest) == write, let cost = state.lru.remove(digest) else { return }
            if left { state.pendingUnlink += cost }
        }
    }
}
