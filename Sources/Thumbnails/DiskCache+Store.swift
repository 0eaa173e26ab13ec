import CLinux
import Foundation
import Glibc
import Locking
import Rendering

/// The disk tier's write path: reserve and evict under the index lock, unlink the victims, write
/// to `tmp/`, rename into place; every byte on disk counted against the limit until it is gone.
extension DiskCache {
    /// Stores `thumbnail` under `key`, evicting least recently used entries first so the limit
    /// holds. The directories are checked first (`checkDirectories`: made again when they were
    /// removed); a write that still finds one gone (ENOENT, removed just then) has them made
    /// again and is tried once more. `.failed` (counted in `writeErrors`) when
    /// the file could not be written, a victim not deleted, or while the directories cannot be
    /// made again, or while the file system is read-only (`DiskSpace`); `.tooLarge` (no error) for
    /// an entry larger than the whole configured limit; `.noRoom` (no error) when writes and
    /// deletions under way hold the room it needs. The limit is the one `DiskSpace` gives: lowered
    /// while the file system is full. A write that fails with `ENOSPC`, `EDQUOT` or `EROFS`
    /// tells `DiskSpace`, with the file system's free bytes (one `statvfs`).
    public func store(_ thumbnail: Thumbnail, for key: CacheKey) -> WriteOutcome {
        ThreadRole.assertNot(.eventLoop, "DiskCache.store blocks on file I/O")
        let bytes = DiskEntry.encode(thumbnail, key: key.canonical)
        let cost = Self.blocks(bytes.count)
        let limitBytes = limitBytes   // read once: a reload may change it meanwhile
        guard cost <= limitBytes else {
            return .tooLarge("the thumbnail takes \(cost) bytes on disk, more than the disk cache's limit of \(limitBytes) bytes")
        }
        // The directories first (three stats): a write must not go into a directory that is
        // not the one claimed (made again by someone else), nor be tried while there is none.
        if let fault = checkDirectories() {
            index.withLock { $0.writeErrors += 1 }
            return .failed(fault)
        }
        let digest = key.digest
        // Under the lock: the victims leave the index, and the write's reservation (its size,
        // or its victims' when more: they are on disk until it unlinks them) is counted.
        enum Claim { case made(victims: [(digest: String, cost: Int)], write: Int, excess: Int), noRoom(Int), busy, fault(String) }
        let claim = index.withLock { state -> Claim in
            // A read-only file system: not tried (a probe finds it writable again).
            if case .readOnly = state.space.state, let fault = state.space.fault {
                state.writeErrors += 1
                return .fault(fault)
            }
            let limit = state.space.limit   // lowered while the file system is full
            // Another write or a deletion of this entry is under way: its unlink must not meet
            // this write's file.
            guard !state.busy.contains(digest) else { return .busy }
            // Were every entry evicted, this one would still not fit: the room is held by
            // writes and deletions under way. Nothing is evicted for a write that cannot be made.
            guard state.reserved + state.pendingUnlink + cost <= limit else { return .noRoom(limit) }
            var victims: [(digest: String, cost: Int)] = []
            if let old = state.lru.remove(digest) { victims.append((digest, old)) }
            while state.lru.totalCost + state.reserved + state.pendingUnlink + cost > limit,
                  let oldest = state.lru.leastRecentKey, let evicted = state.lru.remove(oldest) {
                state.lru.evictions += 1
                victims.append((oldest, evicted))
            }
            state.open[digest] = nil
            state.busy.insert(digest)
            for victim in victims {
                state.open[victim.digest] = nil
                state.busy.insert(victim.digest)
            }
            let excess = max(0, victims.reduce(0) { $0 + $1.cost } - cost)
            state.reserved += cost
            state.pendingUnlink += excess
            state.nextTemporary += 1
            return .made(victims: victims, write: state.nextTemporary, excess: excess)
        }
        let victims: [(digest: String, cost: Int)], write: Int, excess: Int
        switch claim {
        case .made(let v, let w, let e): (victims, write, excess) = (v, w, e)
        case .noRoom(let limit) where limit < limitBytes:
            return .noRoom("the disk cache's limit, lowered to \(limit) bytes while its file system is full, is held by writes under way or too small")
        case .noRoom(let limit): return .noRoom("the disk cache's limit of \(limit) bytes is held by writes under way")
        case .busy: return .busy("another write or a deletion of this entry is under way")
        case .fault(let fault): return .failed(fault)
        }
        victimsChosenForTesting?(victims.map(\.digest))
        // Only once they are gone does their room go to other writes.
        let kept = victims.filter { !removeDropped(path(for: $0.digest)) }
        if !kept.isEmpty {
            // A victim could not be deleted: this write is not made (the room it was to take is
            // still on disk). On a file system turned read-only the victims are there, whole:
            // they go back into the index (counted as entries again, not evicted), and
            // `DiskSpace` hears of it, so no write is tried until it is writable. Otherwise they
            // stay counted (`pendingUnlink`) until a restart.
            let reading = Self.readSpace(directory)
            let readOnly = reading?.readOnly == true
            let stranded = kept.reduce(0) { $0 + $1.cost }
            let work = index.withLock { state -> SpaceWork in
                state.reserved -= cost
                if readOnly {
                    state.pendingUnlink -= excess
                    for victim in kept {
                        state.lru.insert(victim.digest, 0, cost: victim.cost)
                        if victim.digest != digest { state.lru.evictions -= 1 }
                    }
                } else {
                    state.pendingUnlink += stranded - excess
                }
                state.writeErrors += 1
                state.busy.remove(digest)
                for victim in victims { state.busy.remove(victim.digest) }
                guard let reading, readOnly else { return SpaceWork() }
                return handleSpace({ .probed(reading, held: $0) }, in: &state)
            }
            perform(work)
            return .failed("cannot delete evicted entries in the disk cache \(directory)"
                           + (readOnly ? ": its file system is read-only" : ""))
        }
        index.withLock { state in
            state.pendingUnlink -= excess
            for victim in victims where victim.digest != digest { state.busy.remove(victim.digest) }
        }

        let temporaryPath = temporaryDirectory + "/\(getpid())-\(write).tmp"
        var (failure, leftBehind) = place(bytes, digest: digest, through: temporaryPath)
        if failure == ENOENT, !leftBehind, checkDirectories() == nil {
            (failure, leftBehind) = place(bytes, digest: digest, through: temporaryPath)
        }
        // A full or read-only file system: its free bytes, read before the lock is taken.
        let space = [ENOSPC, EDQUOT, EROFS].contains(failure) ? Self.readSpace(directory) : nil
        let work = index.withLock { state -> SpaceWork in
            state.reserved -= cost
            state.busy.remove(digest)
            if failure == 0 { state.lru.insert(digest, write, cost: cost) } else { state.writeErrors += 1 }
            if leftBehind { state.pendingUnlink += cost }   // a temporary file unlink could not remove
            guard failure != 0 else { return SpaceWork() }
            return handleSpace({ .writeFailed(errno: failure, held: $0, reading: space) }, in: &state)
        }
        perform(work)
        guard failure != 0 else { return .written }
        return .failed("cannot write to the disk cache \(directory): \(String(cString: strerror(failure)))")
    }

    /// One attempt at writing an entry: its shard, the temporary file, the rename into place.
    /// 0, or the `errno` of the step that failed (what it created is removed then; `leftBehind`
    /// when that removal failed too).
    private func place(_ bytes: [UInt8], digest: String, through temporaryPath: String) -> (failure: Int32, leftBehind: Bool) {
        // EEXIST is the usual answer; ENOENT says entries/ is gone; ENOSPC, EDQUOT and EROFS
        // are the file system's (`DiskSpace`).
        let shard = shardDirectory(for: digest)
        if mkdir(shard, 0o755) != 0 {
            let failure = errno
            if [ENOENT, ENOSPC, EDQUOT, EROFS].contains(failure) { return (failure, false) }
        }
        // A symlink (or anything but a directory) planted at the shard's name leads out of the
        // cache, perhaps into the library: never written through.
        guard CacheDirectory.isRealDirectory(shard) else { return (ENOTDIR, false) }
        // writeAll removes what it created when it fails, and touches nothing it did not create.
        let written = Self.writeAll(bytes, to: temporaryPath)
        guard written.failure == 0 else { return written }
        let moved = Self.moveIntoPlace(temporaryPath, path(for: digest))
        guard moved != 0 else { return (0, false) }
        return (moved, !Self.removeOwn(temporaryPath))   // made just now by writeAll
    }

    /// Removes an entry's file dropped from the index (`CacheDirectory.removeEntry`). False when
    /// a file of thumbd's form is still there (its unlink failed): its bytes stay counted then.
    func removeDropped(_ path: String) -> Bool {
        CacheDirectory.removeEntry(path) || !isEntryLeft(path)
    }

    /// Whether a file of thumbd's form (`CacheDirectory.holdsEntry`) is at entry path `path`, in
    /// a shard that is a real directory: the bytes the cache must count. Nothing there, or only
    /// what is not thumbd's, is not counted.
    func isEntryLeft(_ path: String) -> Bool {
        let shard = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        return CacheDirectory.isRealDirectory(shard) && CacheDirectory.holdsEntry(path)
    }

    /// Why no entry could be stored through `temporaryDirectory`, tried as `store` does it: a
    /// file created there (`writeAll`, `O_EXCL`) and renamed (`moveIntoPlace`: `renameat2` with
    /// `RENAME_NOREPLACE`, which /proc, /sys and some network file systems refuse), then removed.
    /// Nil when both work. What `--check-config` tries (`CacheDirectory.check`). The names,
    /// `<pid>-0.tmp` and `<pid>-00.tmp`, have the form of a temporary file of this process, so
    /// one left by a crash is known as thumbd's (empty), yet `store` never makes them (its
    /// writes count from 1, in plain digits): a running server trying its own cache meets none
    /// of its writes.
    static func tryStoring(through temporaryDirectory: String) -> String? {
        let made = temporaryDirectory + "/\(getpid())-0.tmp", renamed = temporaryDirectory + "/\(getpid())-00.tmp"
        CacheDirectory.removeEntry(made)   // only an empty file or an entry: one of thumbd's
        let written = writeAll([], to: made)
        guard written.failure == 0 else {
            return "a file cannot be created in \(temporaryDirectory): \(String(cString: strerror(written.failure)))"
        }
        let moved = moveIntoPlace(made, renamed)
        _ = removeOwn(moved == 0 ? renamed : made)
        guard moved == 0 else {
            return "a file cannot be renamed in \(temporaryDirectory) with renameat2(RENAME_NOREPLACE), as the disk cache "
                + "stores its entries: \(String(cString: strerror(moved)))"
        }
        return nil
    }

    /// Unlinks a file this process created; false when it is still there.
    private static func removeOwn(_ path: String) -> Bool {
        unlink(path) == 0 || errno == ENOENT
    }

    static func blocks(_ size: Int) -> Int { (size + 4095) & ~4095 }

    /// Renames a written temporary file to its entry's name without ever replacing a file that
    /// is not thumbd's (`renameat2` with `RENAME_NOREPLACE`): what sits there is removed first
    /// only when `CacheDirectory.removeEntry` finds it is an entry (another writer's, or a stale
    /// one), otherwise the write fails. Returns 0, or the `errno` that stopped it (`EEXIST`
    /// for a file there that is not thumbd's).
    private static func moveIntoPlace(_ temporaryPath: String, _ entryPath: String) -> Int32 {
        for _ in 0..<2 {
            if clinux_rename_noreplace(temporaryPath, entryPath) == 0 { return 0 }
            let failure = errno
            guard failure == EEXIST, CacheDirectory.removeEntry(entryPath) else { return failure }
        }
        return EEXIST
    }

    /// Creates `path` (it must not exist) holding `bytes`; on a failure removes the file it
    /// created. Returns 0 when all was written and closed, else the `errno` that stopped it, and
    /// whether the file it created is left behind (its removal failed).
    private static func writeAll(_ bytes: [UInt8], to path: String) -> (failure: Int32, leftBehind: Bool) {
        // Read-only: thumbd never writes an entry in place (a write goes to tmp/ and is renamed),
        // and a hit may be sent from the file with sendfile while it sits in a socket buffer.
        // O_EXCL: a file already at this name is not ours to write into, nor to remove.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
        guard fd >= 0 else { return (errno, false) }
        var done = 0
        var failure = bytes.withUnsafeBytes { buffer -> Int32 in
            while done < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { return errno }
                if n == 0 { return ENOSPC }   // write(2) of a regular file returns 0 only when nothing fits
                done += n
            }
            return 0
        }
        if close(fd) != 0 && failure == 0 { failure = errno }
        return (failure, failure != 0 && !removeOwn(path))
    }
}
