import CLinux
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
import Locking
#endif

/// The second cache tier: one file per thumbnail under `directory`, bounded by bytes, least
/// recently used evicted first. Recency is tracked by the server (an in-memory LRU list, and a
/// hit stamps the file's mtime, at most once per `recencyResolutionNanoseconds`, so the order
/// survives a restart); file atime is never relied on.
///
/// Entries survive restarts. Writes go to `tmp/` and are renamed into `entries/`, so a reader
/// never sees a half-written file at an entry's name; every read checks length, key and checksum
/// (`DiskEntry`) and drops what fails. The directory must be thumbd's (`CacheDirectory.claim`),
/// and a file in it is deleted or replaced only when it has the form of thumbd's own
/// (`CacheDirectory.removeEntry`); anything else is left alone. Sizes are counted in 4 KiB blocks
/// as the file system allocates them.
///
/// The bytes on disk (entries and temporary files) never exceed the limit, at any instant: every
/// file thumbd may have there is counted against it until it is gone. An entry in the index
/// counts its size; a write counts its size (`reserved`) from before it creates its temporary
/// file until it is indexed or its file removed; a victim evicted for a write stays counted
/// until the write has unlinked it, inside the write's reservation and, for what it holds beyond
/// it, in `pendingUnlink`. So another write that lands between the eviction and the unlink
/// finds no room in bytes still on disk. A file an unlink could not remove stays counted in
/// `pendingUnlink` until a restart. A write that finds no room even with every entry evicted
/// (writes and deletions under way hold it: a limit only a few thumbnails large) is not written.
///
/// Never throws after start-up: a failed read is a miss, a failed write counts in `writeErrors`.
/// Directories removed while it runs are made again by the start-up rules
/// (`DiskCache+Directories.swift`).
/// All methods but `readWithoutWaiting` may block on file I/O; call them off the event loops. Thread-safe: the index and
/// counters sit behind one `Mutex` (`index`; file I/O happens outside it), what is known of the
/// directories behind another (`directories`, held through a recovery so that one runs at once;
/// never taken while `index` is held).
public final class DiskCache: Sendable {
    /// Counters and gauges for `/stats` (`disk_cache`).
    public struct Statistics: Sendable, Equatable {
        public var entries = 0
        /// Bytes counted against the limit, in 4 KiB blocks: the entries', the writes' under
        /// way, and those of files dropped from the index but not yet deleted.
        public var bytes = 0
        public var limitBytes = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        public var writeErrors = 0
        /// Entries found truncated, empty or corrupt when read, and dropped (and deleted when
        /// they are thumbd's files; see `CacheDirectory.removeEntry`).
        public var corrupt = 0
        /// Times the cache directory, `entries/` or `tmp/` were found gone or replaced while
        /// the server ran (each then made again when `CacheDirectory.reclaim` allows).
        public var directoryFaults = 0
        /// Why the disk tier cannot keep thumbnails now (one sentence), or nil while it can.
        public var fault: String?
    }

    /// What `store` did with a thumbnail.
    public enum WriteOutcome: Sendable, Equatable {
        case written
        /// Not written, counted in `writeErrors`: why, one sentence naming the fault.
        case failed(String)
        /// Larger than the whole limit: not written, and no error.
        case tooLarge(String)
        /// Not written, and no error: the room it needs is held by writes and deletions under way
        /// (with a limit only a few thumbnails large); a later write finds it free.
        case noRoom(String)
    }

    /// Raised by `init` only.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    struct Index {
        /// Each entry's value is the write that made it (`nextTemporary` then; 0 for an entry
        /// found at start), so that a sweep tells an entry written since it looked.
        var lru = LRUList<Int>()
        /// Entries checked and kept open for `openWithoutWaiting`, with what their path showed.
        var open: [String: (entry: OpenDiskEntry, stamp: FileStamp)] = [:]
        /// Bytes reserved by writes in progress, counted against the limit (each write's size,
        /// from before its temporary file exists until it is indexed or removed).
        var reserved = 0
        /// Bytes of files dropped from the index and maybe still on disk, counted against the
        /// limit: a write's victims beyond its own size, until it has unlinked them; and files
        /// an unlink could not remove (until a restart).
        var pendingUnlink = 0
        var writeErrors = 0
        var corrupt = 0
        var nextTemporary = 0
    }

    /// The cache directory (holds `entries/` and `tmp/`).
    public let directory: String
    /// The byte limit (default 2 GiB in config).
    public let limitBytes: Int
    /// How close the LRU order after a restart follows the reads before it, ns: a hit stamps the
    /// entry's mtime only when the mtime is at least this old. `1 s` by default.
    public let recencyResolutionNanoseconds: Int64
    /// The library the cache stays apart from when it is made again (`CacheDirectory.reclaim`);
    /// nil: none given (tests).
    public let libraryRoot: String?
    /// While the directories cannot be made again, how often a write tries again, ns. `1 s` by default.
    let faultRecheckNanoseconds: UInt64
    /// Where a directory fault is said (once per fault, and once when it is over). stderr in the server.
    let warn: @Sendable (String) -> Void
    /// Entries `openWithoutWaiting` keeps open at most (one descriptor each); 0 keeps none.
    /// `256` by default.
    public let openEntryLimit: Int
    let entriesDirectory: String
    let temporaryDirectory: String
    let index: Mutex<Index>
    /// The directories as last claimed, and the fault; held through a recovery, so one runs at once.
    let directories: Mutex<Directories>

    /// Tests only: runs with the entry's path right after `openWithoutWaiting` checked it (to
    /// write into the file at the worst moment). Nil in the server.
    let afterCheckForTesting = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Tests only: runs in `store` with the digests of the write's victims, after they were
    /// chosen and dropped from the index and before their files are unlinked (to let another
    /// write run at the worst moment). Nil in the server: a `let`, so nil costs one test.
    let victimsChosenForTesting: (@Sendable ([String]) -> Void)?

    /// Claims (creating if needed) the cache at `directory`, deletes leftover temporary files and
    /// indexes the entries already there, oldest first, evicting down to `limitBytes`.
    /// `recencyResolutionSeconds` (default 1) bounds how often a hit rewrites an entry's mtime;
    /// `openEntryLimit` (default 256) how many checked entries are kept open (descriptors).
    /// `library`: the library root (resolved) the cache must stay apart from if it has to be
    /// made again while running; nil (default) checks none. `faultRecheckSeconds` (default 1):
    /// how often writes try again to make the directories while they cannot. `warn`: where a
    /// directory fault is said; stderr (`thumbd: ` first) by default.
    /// - Throws: `SetupError` naming the directory when it cannot be created or read, or is not
    ///   thumbd's to use (`CacheDirectory.claim`: it holds files thumbd did not create).
    public convenience init(directory: String, limitBytes: Int, recencyResolutionSeconds: Double = 1,
                            openEntryLimit: Int = 256, library: String? = nil, faultRecheckSeconds: Double = 1,
                            warn: @escaping @Sendable (String) -> Void = DiskCache.standardErrorWarning) throws {
        try self.init(directory: directory, limitBytes: limitBytes, recencyResolutionSeconds: recencyResolutionSeconds,
                      openEntryLimit: openEntryLimit, library: library, faultRecheckSeconds: faultRecheckSeconds,
                      warn: warn, victimsChosenForTesting: nil)
    }

    /// The public `init`, with `victimsChosenForTesting` (tests only).
    init(directory: String, limitBytes: Int, recencyResolutionSeconds: Double = 1, openEntryLimit: Int = 256,
         library: String? = nil, faultRecheckSeconds: Double = 1,
         warn: @escaping @Sendable (String) -> Void = DiskCache.standardErrorWarning,
         victimsChosenForTesting: (@Sendable ([String]) -> Void)?) throws {
        self.victimsChosenForTesting = victimsChosenForTesting
        self.directory = directory
        self.openEntryLimit = max(0, openEntryLimit)
        self.limitBytes = max(0, limitBytes)
        recencyResolutionNanoseconds = Int64(max(0, recencyResolutionSeconds) * 1e9)
        libraryRoot = library
        faultRecheckNanoseconds = UInt64(max(0, min(faultRecheckSeconds, 1e6)) * 1e9)
        self.warn = warn
        entriesDirectory = directory + "/entries"
        temporaryDirectory = directory + "/tmp"
        do {
            try CacheDirectory.claim(directory)
        } catch {
            throw SetupError(description: error.description)
        }
        // A cache that can be read but not written (a read-only mount) still serves what it
        // holds; every write then fails and is counted in `writeErrors`.
        guard access(directory, R_OK | X_OK) == 0 else {
            throw SetupError(description: "the cache directory \(directory) is not readable")
        }
        let fm = FileManager.default
        // Only what has the form of thumbd's own files is touched: a temporary file left by a
        // crash is deleted, an entry is indexed, anything else is left where it is.
        for name in (try? fm.contentsOfDirectory(atPath: temporaryDirectory)) ?? []
        where CacheDirectory.isTemporaryName(name) && CacheDirectory.holdsEntry(temporaryDirectory + "/" + name) {
            unlink(temporaryDirectory + "/" + name)
        }
        var found: [(digest: String, cost: Int, modified: Int64)] = []
        for shard in (try? fm.contentsOfDirectory(atPath: entriesDirectory)) ?? [] {
            let shardPath = entriesDirectory + "/" + shard
            guard CacheDirectory.isRealDirectory(shardPath) else { continue }   // a link leads out of the cache
            for name in (try? fm.contentsOfDirectory(atPath: shardPath)) ?? []
            where CacheDirectory.isEntryName(name) && name.hasPrefix(shard) {
                var st = stat()
                guard lstat(shardPath + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                found.append((name, Self.blocks(Int(st.st_size)), st.st_mtim.nanoseconds))
            }
        }
        found.sort { ($0.modified, $0.digest) < ($1.modified, $1.digest) }
        var initial = Index()
        for entry in found { initial.lru.insert(entry.digest, 0, cost: entry.cost) }
        var victims: [String] = []
        while initial.lru.totalCost > self.limitBytes, let oldest = initial.lru.leastRecentKey {
            initial.lru.remove(oldest)
            initial.lru.evictions += 1
            victims.append(oldest)
        }
        index = Mutex(initial)
        directories = Mutex(Directories(identities: Self.identities(directory)))
        for digest in victims { CacheDirectory.removeEntry(path(for: digest)) }
    }

    /// What `readWithoutWaiting` found.
    public enum Lookup: Sendable {
        case hit(Thumbnail)
        case miss
        /// The entry exists but its bytes are not all in the page cache: nothing was counted
        /// or changed; `read` it from a thread that may block.
        case wouldBlock
    }

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
            let left = fd >= 0 ? !removeDropped(path) : isEntryLeft(path)
            index.withLock { state in
                state.lru.hits -= hit
                state.open[key.digest] = nil
                if state.drop(key.digest, write: write, fileLeft: left), fd >= 0 { state.corrupt += 1 }
                if countingMisses { state.lru.misses += 1 }
            }
            return .miss
        }
        return .hit(thumbnail)
    }

    /// True when an entry for `key` is indexed (no I/O, no counting).
    public func contains(_ key: CacheKey) -> Bool {
        index.withLock { $0.lru.peek(key.digest) != nil }
    }

    /// Stores `thumbnail` under `key` (`store`); true when it was written.
    @discardableResult
    public func write(_ thumbnail: Thumbnail, for key: CacheKey) -> Bool {
        store(thumbnail, for: key) == .written
    }

    /// Stores `thumbnail` under `key`, evicting least recently used entries first so the limit
    /// holds. The directories are checked first (`checkDirectories`: made again when they were
    /// removed); a write that still finds one gone (ENOENT, removed just then) has them made
    /// again and is tried once more. `.failed` (counted in `writeErrors`) when
    /// the file could not be written, a victim not deleted, or while the directories cannot be
    /// made again; `.tooLarge` (no error) for an entry larger than the whole limit; `.noRoom` (no
    /// error) when writes and deletions under way hold the room it needs.
    public func store(_ thumbnail: Thumbnail, for key: CacheKey) -> WriteOutcome {
        ThreadRole.assertNot(.eventLoop, "DiskCache.store blocks on file I/O")
        let bytes = DiskEntry.encode(thumbnail, key: key.canonical)
        let cost = Self.blocks(bytes.count)
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
        let claim = index.withLock { state -> (victims: [(digest: String, cost: Int)], write: Int, excess: Int)? in
            // Were every entry evicted, this one would still not fit: the room is held by
            // writes and deletions under way. Nothing is evicted for a write that cannot be made.
            guard state.reserved + state.pendingUnlink + cost <= limitBytes else { return nil }
            var victims: [(digest: String, cost: Int)] = []
            if let old = state.lru.remove(digest) { victims.append((digest, old)) }
            while state.lru.totalCost + state.reserved + state.pendingUnlink + cost > limitBytes,
                  let oldest = state.lru.leastRecentKey, let evicted = state.lru.remove(oldest) {
                state.lru.evictions += 1
                victims.append((oldest, evicted))
            }
            state.open[digest] = nil
            for victim in victims { state.open[victim.digest] = nil }
            let excess = max(0, victims.reduce(0) { $0 + $1.cost } - cost)
            state.reserved += cost
            state.pendingUnlink += excess
            state.nextTemporary += 1
            return (victims, state.nextTemporary, excess)
        }
        guard let (victims, write, excess) = claim else {
            return .noRoom("the disk cache's limit of \(limitBytes) bytes is held by writes under way")
        }
        victimsChosenForTesting?(victims.map(\.digest))
        // Only once they are gone does their room go to other writes.
        let stranded = victims.reduce(0) { $0 + (removeDropped(path(for: $1.digest)) ? 0 : $1.cost) }
        if stranded > 0 {
            // A victim could not be deleted: it stays counted, and this write is not made (the
            // room it was to take is still on disk).
            index.withLock { state in
                state.reserved -= cost
                state.pendingUnlink += stranded - excess
                state.writeErrors += 1
            }
            return .failed("cannot delete evicted entries in the disk cache \(directory)")
        }
        if excess > 0 { index.withLock { $0.pendingUnlink -= excess } }

        let temporaryPath = temporaryDirectory + "/\(getpid())-\(write).tmp"
        var (failure, leftBehind) = place(bytes, digest: digest, through: temporaryPath)
        if failure == ENOENT, !leftBehind, checkDirectories() == nil {
            (failure, leftBehind) = place(bytes, digest: digest, through: temporaryPath)
        }
        index.withLock { state in
            state.reserved -= cost
            if failure == 0 { state.lru.insert(digest, write, cost: cost) } else { state.writeErrors += 1 }
            if leftBehind { state.pendingUnlink += cost }   // a temporary file unlink could not remove
        }
        guard failure != 0 else { return .written }
        return .failed("cannot write to the disk cache \(directory): \(String(cString: strerror(failure)))")
    }

    /// One attempt at writing an entry: its shard, the temporary file, the rename into place.
    /// 0, or the `errno` of the step that failed (what it created is removed then; `leftBehind`
    /// when that removal failed too).
    private func place(_ bytes: [UInt8], digest: String, through temporaryPath: String) -> (failure: Int32, leftBehind: Bool) {
        // EEXIST is the usual answer; ENOENT says entries/ is gone.
        let shard = shardDirectory(for: digest)
        if mkdir(shard, 0o755) != 0 && errno == ENOENT { return (ENOENT, false) }
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

    /// Unlinks a file this process created; false when it is still there.
    private static func removeOwn(_ path: String) -> Bool {
        unlink(path) == 0 || errno == ENOENT
    }

    public var statistics: Statistics {
        var statistics = index.withLock { state in
            Statistics(entries: state.lru.count, bytes: state.lru.totalCost + state.reserved + state.pendingUnlink,
                       limitBytes: limitBytes,
                       hits: state.lru.hits, misses: state.lru.misses, evictions: state.lru.evictions,
                       writeErrors: state.writeErrors, corrupt: state.corrupt)
        }
        let directories = directories.withLock { ($0.faults, $0.fault) }
        statistics.directoryFaults = directories.0
        statistics.fault = directories.1
        return statistics
    }

    /// `entries/<first two hex digits>/<digest>`: 256 shards keep directories small.
    func path(for digest: String) -> String {
        shardDirectory(for: digest) + "/" + digest
    }

    func shardDirectory(for digest: String) -> String {
        entriesDirectory + "/" + digest.prefix(2)
    }

    private static func blocks(_ size: Int) -> Int { (size + 4095) & ~4095 }

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

extension DiskCache.Index {
    /// Drops `digest`'s entry when it is still the one `write` made (not written again since it
    /// was looked up: a newer file at its name is counted by its own write). Its bytes stay
    /// counted, in `pendingUnlink`, when `fileLeft` (its file could not be deleted). True when
    /// dropped.
    mutating func drop(_ digest: String, write: Int, fileLeft: Bool) -> Bool {
        guard lru.peek(digest) == write, let cost = lru.remove(digest) else { return false }
        if fileLeft { pendingUnlink += cost }
        return true
    }
}
