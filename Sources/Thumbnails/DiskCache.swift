import CLinux
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
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
/// (`CacheDirectory.removeEntry`); anything else is left alone. Space is reserved and victims are deleted *before* a new
/// file is written, so the bytes on disk never exceed the limit. Sizes are counted in 4 KiB blocks
/// as the file system allocates them.
///
/// Never throws after start-up: a failed read is a miss, a failed write counts in `writeErrors`.
/// All methods but `readWithoutWaiting` may block on file I/O; call them off the event loops. Thread-safe: the index and
/// counters sit behind one `Mutex`; file I/O happens outside it.
public final class DiskCache: Sendable {
    /// Counters and gauges for `/stats` (`disk_cache`).
    public struct Statistics: Sendable, Equatable {
        public var entries = 0
        /// Bytes the entries occupy, in 4 KiB blocks.
        public var bytes = 0
        public var limitBytes = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        public var writeErrors = 0
        /// Entries found truncated, empty or corrupt when read, and dropped (and deleted when
        /// they are thumbd's files; see `CacheDirectory.removeEntry`).
        public var corrupt = 0
    }

    /// Raised by `init` only.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    struct Index {
        var lru = LRUList<Void>()
        /// Entries checked and kept open for `openWithoutWaiting`, with what their path showed.
        var open: [String: (entry: OpenDiskEntry, stamp: FileStamp)] = [:]
        /// Bytes reserved by writes in progress, counted against the limit.
        var reserved = 0
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
    /// Entries `openWithoutWaiting` keeps open at most (one descriptor each); 0 keeps none.
    /// `256` by default.
    public let openEntryLimit: Int
    private let entriesDirectory: String
    private let temporaryDirectory: String
    let index: Mutex<Index>

    /// Tests only: runs with the entry's path right after `openWithoutWaiting` checked it (to
    /// write into the file at the worst moment). Nil in the server.
    let afterCheckForTesting = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Claims (creating if needed) the cache at `directory`, deletes leftover temporary files and
    /// indexes the entries already there, oldest first, evicting down to `limitBytes`.
    /// `recencyResolutionSeconds` (default 1) bounds how often a hit rewrites an entry's mtime;
    /// `openEntryLimit` (default 256) how many checked entries are kept open (descriptors).
    /// - Throws: `SetupError` naming the directory when it cannot be created or read, or is not
    ///   thumbd's to use (`CacheDirectory.claim`: it holds files thumbd did not create).
    public init(directory: String, limitBytes: Int, recencyResolutionSeconds: Double = 1,
                openEntryLimit: Int = 256) throws {
        self.directory = directory
        self.openEntryLimit = max(0, openEntryLimit)
        self.limitBytes = max(0, limitBytes)
        recencyResolutionNanoseconds = Int64(max(0, recencyResolutionSeconds) * 1e9)
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
            for name in (try? fm.contentsOfDirectory(atPath: shardPath)) ?? []
            where CacheDirectory.isEntryName(name) && name.hasPrefix(shard) {
                var st = stat()
                guard lstat(shardPath + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                found.append((name, Self.blocks(Int(st.st_size)), st.st_mtim.nanoseconds))
            }
        }
        found.sort { ($0.modified, $0.digest) < ($1.modified, $1.digest) }
        var initial = Index()
        for entry in found { initial.lru.insert(entry.digest, (), cost: entry.cost) }
        var victims: [String] = []
        while initial.lru.totalCost > self.limitBytes, let oldest = initial.lru.leastRecentKey {
            initial.lru.remove(oldest)
            initial.lru.evictions += 1
            victims.append(oldest)
        }
        index = Mutex(initial)
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
        if case .hit(let thumbnail) = lookUp(key, waiting: true, countingMisses: true) { return thumbnail }
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
    private func lookUp(_ key: CacheKey, waiting: Bool, countingMisses: Bool) -> Lookup {
        let known = index.withLock { state -> Bool in
            guard state.lru.touch(key.digest) != nil else {
                if countingMisses { state.lru.misses += 1 }
                return false
            }
            state.lru.hits += 1
            return true
        }
        guard known else { return .miss }
        let path = path(for: key.digest)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)   // O_NONBLOCK: a FIFO planted here must not hang the thread
        if fd < 0 && (errno == EMFILE || errno == ENFILE) {
            // No descriptor free: nothing is known about the file, which stays indexed (a
            // blocking read renders instead, and that render meets the same shortage or not).
            index.withLock { state in
                state.lru.hits -= 1
                if countingMisses && waiting { state.lru.misses += 1 }
            }
            return waiting ? .miss : .wouldBlock
        }
        var thumbnail: Thumbnail?
        if fd >= 0 {
            guard let found = Self.readEntry(fd, key: key.canonical, waiting: waiting,
                                             stampInterval: recencyResolutionNanoseconds) else {
                close(fd)
                index.withLock { $0.lru.hits -= 1 }
                return .wouldBlock
            }
            thumbnail = found
            close(fd)
        }
        guard let thumbnail else {
            if fd >= 0 { CacheDirectory.removeEntry(path) }
            index.withLock { state in
                state.lru.hits -= 1
                state.open[key.digest] = nil
                if state.lru.remove(key.digest) != nil, fd >= 0 { state.corrupt += 1 }
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

    /// Stores `thumbnail` under `key`, evicting least recently used entries first so the limit
    /// holds. Returns false (and counts a write error) when the file could not be written; an
    /// entry larger than the whole limit is skipped and returns false without an error.
    @discardableResult
    public func write(_ thumbnail: Thumbnail, for key: CacheKey) -> Bool {
        let bytes = DiskEntry.encode(thumbnail, key: key.canonical)
        let cost = Self.blocks(bytes.count)
        guard cost <= limitBytes else { return false }
        let digest = key.digest
        let (victims, temporaryName) = index.withLock { state -> ([String], String) in
            var victims: [String] = []
            if state.lru.remove(digest) != nil { victims.append(digest) }
            while state.lru.totalCost + state.reserved + cost > limitBytes, let oldest = state.lru.leastRecentKey {
                state.lru.remove(oldest)
                state.lru.evictions += 1
                victims.append(oldest)
            }
            state.open[digest] = nil
            for victim in victims { state.open[victim] = nil }
            state.reserved += cost
            state.nextTemporary += 1
            return (victims, "\(getpid())-\(state.nextTemporary).tmp")
        }
        for victim in victims { CacheDirectory.removeEntry(path(for: victim)) }

        let temporaryPath = temporaryDirectory + "/" + temporaryName
        mkdir(shardDirectory(for: digest), 0o755)  // EEXIST is the usual answer
        // writeAll removes what it created when it fails, and touches nothing it did not create.
        var written = Self.writeAll(bytes, to: temporaryPath)
        if written && !Self.moveIntoPlace(temporaryPath, path(for: digest)) {
            unlink(temporaryPath)   // made just now by writeAll
            written = false
        }
        index.withLock { state in
            state.reserved -= cost
            if written { state.lru.insert(digest, (), cost: cost) } else { state.writeErrors += 1 }
        }
        return written
    }

    public var statistics: Statistics {
        index.withLock { state in
            Statistics(entries: state.lru.count, bytes: state.lru.totalCost + state.reserved, limitBytes: limitBytes,
                       hits: state.lru.hits, misses: state.lru.misses, evictions: state.lru.evictions,
                       writeErrors: state.writeErrors, corrupt: state.corrupt)
        }
    }

    /// `entries/<first two hex digits>/<digest>`: 256 shards keep directories small.
    func path(for digest: String) -> String {
        shardDirectory(for: digest) + "/" + digest
    }

    private func shardDirectory(for digest: String) -> String {
        entriesDirectory + "/" + digest.prefix(2)
    }

    private static func blocks(_ size: Int) -> Int { (size + 4095) & ~4095 }

    /// Renames a written temporary file to its entry's name without ever replacing a file that
    /// is not thumbd's (`renameat2` with `RENAME_NOREPLACE`): what sits there is removed first
    /// only when `CacheDirectory.removeEntry` finds it is an entry (another writer's, or a stale
    /// one), otherwise the write fails.
    private static func moveIntoPlace(_ temporaryPath: String, _ entryPath: String) -> Bool {
        for _ in 0..<2 {
            if clinux_rename_noreplace(temporaryPath, entryPath) == 0 { return true }
            guard errno == EEXIST, CacheDirectory.removeEntry(entryPath) else { return false }
        }
        return false
    }

    /// Creates `path` (it must not exist) holding `bytes`; on a failure removes the file it
    /// created. Returns whether all was written and closed.
    private static func writeAll(_ bytes: [UInt8], to path: String) -> Bool {
        // Read-only: thumbd never writes an entry in place (a write goes to tmp/ and is renamed),
        // and a hit may be sent from the file with sendfile while it sits in a socket buffer.
        // O_EXCL: a file already at this name is not ours to write into, nor to remove.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o444)
        guard fd >= 0 else { return false }
        var done = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            while done < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        let closed = close(fd) == 0
        if !(closed && ok) { unlink(path) }
        return closed && ok
    }
}
