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
/// A full file system (`ENOSPC`, or `EDQUOT`) lowers the limit to what fits and a read-only one
/// (`EROFS`) stops the writes, until probes find room or write access again (`DiskSpace`, driven
/// by `DiskCache+Space.swift`); a lowered limit is kept as the configured one is: no write is
/// made past it, and its victims count until their files are gone.
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
        /// The configured limit, bytes.
        public var limitBytes = 0
        /// The limit writes are admitted against now: `limitBytes`, or lower while the file
        /// system is full (`DiskSpace`).
        public var effectiveLimitBytes = 0
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
        /// Times the cache's file system was found full (or a quota met) or read-only
        /// (`DiskSpace`), each a fault until probes find it mended.
        public var spaceFaults = 0
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
        /// Not written, and no error: another write or a deletion of the same entry is under way
        /// (`Index.busy`); the entry it stores holds the same key's pixels.
        case busy(String)
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
        /// Entries whose file a write or a deletion is changing now: a write from its claim until
        /// it is indexed or has failed, a deletion from its choice until its unlink returned.
        /// Never in `lru` meanwhile, so no eviction picks them; a write of one is not made
        /// (`.busy`), so no unlink removes a file another write has just placed (and left indexed).
        var busy: Set<String> = []
        var writeErrors = 0
        var corrupt = 0
        var nextTemporary = 0
        /// Whether the file system takes writes, and the limit that follows (`DiskSpace`).
        var space: DiskSpace
    }

    /// The cache directory (holds `entries/` and `tmp/`).
    public let directory: String
    /// The byte limit (default 2 GiB in config); changed by `setLimit` (a reload).
    public var limitBytes: Int { limit.load(ordering: .relaxed) }
    /// Stored under `index`'s lock (`setLimit`), read without it.
    let limit: Atomic<Int>
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
    /// While the file system is full or read-only, how often it is probed, ns. `5 s` by default.
    let spaceProbeNanoseconds: UInt64
    /// The probe's timer while a `DiskSpace` fault lasts; nil otherwise.
    let probe = Mutex<(any DispatchSourceTimer)?>(nil)
    /// Uptime in nanoseconds: when a `DiskSpace` fault started.
    let clock: any UptimeClock
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
    /// Tests only: runs in `store` with the digests of the write's victims (and in
    /// `perform(_:)` with a lowered limit's), after they were chosen and dropped from the index
    /// and before their files are unlinked (to let another write run at the worst moment). Nil in the server: a `let`, so nil costs one test.
    let victimsChosenForTesting: (@Sendable ([String]) -> Void)?

    /// Claims (creating if needed) the cache at `directory`, deletes leftover temporary files and
    /// indexes the entries already there, oldest first, evicting down to `limitBytes`.
    /// `recencyResolutionSeconds` (default 1) bounds how often a hit rewrites an entry's mtime;
    /// `openEntryLimit` (default 256) how many checked entries are kept open (descriptors).
    /// `library`: the library root (resolved) the cache must stay apart from if it has to be
    /// made again while running; nil (default) checks none. `faultRecheckSeconds` (default 1):
    /// how often writes try again to make the directories while they cannot. `warn`: where a
    /// directory fault is said; stderr (`thumbd: ` first) by default. `spaceProbeSeconds` (default
    /// 5): how often a full or read-only file system is probed while it is (`DiskSpace`);
    /// `clock`: the system's uptime by default. `leavesIndexHeadroom` (default false): a full file
    /// system lowers the limit further, to leave `DiskSpace.indexHeadroom` free for the library
    /// index that shares the directory (a server's tier: `init(configuration:)`).
    /// - Throws: `SetupError` naming the directory when it cannot be created or read, or is not
    ///   thumbd's to use (`CacheDirectory.claim`: it holds files thumbd did not create).
    public convenience init(directory: String, limitBytes: Int, recencyResolutionSeconds: Double = 1,
                            openEntryLimit: Int = 256, library: String? = nil, faultRecheckSeconds: Double = 1,
                            spaceProbeSeconds: Double = 5, clock: any UptimeClock = SystemUptimeClock(),
                            leavesIndexHeadroom: Bool = false,
                            warn: @escaping @Sendable (String) -> Void = DiskCache.standardErrorWarning) throws {
        try self.init(directory: directory, limitBytes: limitBytes, recencyResolutionSeconds: recencyResolutionSeconds,
                      openEntryLimit: openEntryLimit, library: library, faultRecheckSeconds: faultRecheckSeconds,
                      spaceProbeSeconds: spaceProbeSeconds, clock: clock, leavesIndexHeadroom: leavesIndexHeadroom,
                      warn: warn, victimsChosenForTesting: nil)
    }

    /// The disk tier a pipeline of `configuration` uses: its `cacheDirectory`, `diskLimitBytes`,
    /// `openDiskEntryLimit` and `libraryRoot`, leaving the library index its headroom on a full
    /// file system. Throws as `init(directory:limitBytes:…)`.
    public convenience init(configuration: PipelineConfiguration) throws {
        try self.init(directory: configuration.cacheDirectory, limitBytes: configuration.diskLimitBytes,
                      openEntryLimit: configuration.openDiskEntryLimit, library: configuration.libraryRoot,
                      leavesIndexHeadroom: true)
    }

    /// The public `init`, with `victimsChosenForTesting` (tests only).
    init(directory: String, limitBytes: Int, recencyResolutionSeconds: Double = 1, openEntryLimit: Int = 256,
         library: String? = nil, faultRecheckSeconds: Double = 1, spaceProbeSeconds: Double = 5,
         clock: any UptimeClock = SystemUptimeClock(), leavesIndexHeadroom: Bool = false,
         warn: @escaping @Sendable (String) -> Void = DiskCache.standardErrorWarning,
         victimsChosenForTesting: (@Sendable ([String]) -> Void)?) throws {
        self.victimsChosenForTesting = victimsChosenForTesting
        self.directory = directory
        self.openEntryLimit = max(0, openEntryLimit)
        limit = Atomic(max(0, limitBytes))
        recencyResolutionNanoseconds = Int64(max(0, recencyResolutionSeconds) * 1e9)
        libraryRoot = library
        faultRecheckNanoseconds = UInt64(max(0, min(faultRecheckSeconds, 1e6)) * 1e9)
        spaceProbeNanoseconds = UInt64(max(0.001, min(spaceProbeSeconds, 1e6)) * 1e9)
        self.clock = clock
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
        var fs = statvfs()
        let headroom = leavesIndexHeadroom && statvfs(directory, &fs) == 0
            ? DiskSpace.indexHeadroom(fileSystemBytes: Int(fs.f_blocks) * Int(fs.f_frsize)) : 0
        var initial = Index(space: DiskSpace(directory: directory, configuredLimit: max(0, limitBytes), headroom: headroom))
        for entry in found { initial.lru.insert(entry.digest, 0, cost: entry.cost) }
        var victims: [String] = []
        while initial.lru.totalCost > max(0, limitBytes), let oldest = initial.lru.leastRecentKey {
            initial.lru.remove(oldest)
            initial.lru.evictions += 1
            victims.append(oldest)
        }
        index = Mutex(initial)
        directories = Mutex(Directories(identities: Self.identities(directory)))
        for digest in victims { CacheDirectory.removeEntry(path(for: digest)) }
    }

    deinit {
        probe.withLock { $0?.cancel() }
    }

    /// What `readWithoutWaiting` found.
    public enum Lookup: Sendable {
        case hit(Thumbnail)
        case miss
        /// The entry exists but its bytes are not all in the page cache: nothing was counted
        /// or changed; `read` it from a thread that may block.
        case wouldBlock
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

    public var statistics: Statistics {
        var statistics = index.withLock { state in
            Statistics(entries: state.lru.count, bytes: state.lru.totalCost + state.reserved + state.pendingUnlink,
                       limitBytes: limitBytes, effectiveLimitBytes: state.space.limit,
                       hits: state.lru.hits, misses: state.lru.misses, evictions: state.lru.evictions,
                       writeErrors: state.writeErrors, corrupt: state.corrupt,
                       spaceFaults: state.space.faults, fault: state.space.fault)
        }
        let directories = directories.withLock { ($0.faults, $0.fault) }
        statistics.directoryFaults = directories.0
        statistics.fault = directories.1 ?? statistics.fault
        return statistics
    }

    /// `entries/<first two hex digits>/<digest>`: 256 shards keep directories small.
    func path(for digest: String) -> String {
        shardDirectory(for: digest) + "/" + digest
    }

    func shardDirectory(for digest: String) -> String {
        entriesDirectory + "/" + digest.prefix(2)
    }
}
