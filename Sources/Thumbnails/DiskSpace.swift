#if canImport(Glibc)
import Glibc
#endif

/// Whether the disk tier's file system takes its writes, and the limit that follows (issue 29,
/// item 7): a state machine fed what writes and probes find, with the time, returning what its
/// driver (`DiskCache+Space.swift`) does. No I/O here.
///
/// - `writable`: the limit is the configured one.
/// - `full`: a write failed with `ENOSPC`: the limit is lowered to what fits, the bytes the tier
///   held then and those still free less `headroom` (left free for the library index beside the
///   tier, `indexHeadroom`), so the next writes evict least recently used entries to make the room
///   they need beyond. Each probe sets it again to the bytes held plus those free less `headroom`
///   (the tier's own writes, which take free bytes as they add held ones, leave it unchanged;
///   another program's growth, the index's among them, lowers it, its deletions raise it). Back at
///   the configured limit, the fault is over. `EDQUOT` (a quota) alike, but `statvfs(3)` does not
///   see a quota: the bytes free when the write failed are no room, and only what is freed since
///   counts.
/// - `readOnly`: a write failed with `EROFS`, or a probe found the file system mounted
///   read-only (`ST_RDONLY`): writes are not tried (each is counted a failure) until a probe
///   finds it writable.
///
/// A fault is said once as it starts and once as it ends (`Effect.say`), never per write; while
/// one lasts, the driver probes (`startProbing`, `stopProbing`). `fault` is the sentence
/// `/healthz` and `/stats` give.
struct DiskSpace: Sendable, Equatable {
    /// The file system as `statvfs(3)` read it.
    struct Reading: Sendable, Equatable {
        /// Bytes an unprivileged write may still take (`f_bavail * f_frsize`).
        var free: Int
        /// Mounted read-only (`ST_RDONLY`).
        var readOnly: Bool
    }

    /// The bytes a full file system keeps free for the library index (`index.sqlite`, its WAL)
    /// beside the tier in `cache_dir`, on a file system of `fileSystemBytes` (`f_blocks *
    /// f_frsize`): 4 MiB, what the index's write-ahead log grows to before SQLite writes it back
    /// into the database and reuses it from its start (its automatic checkpoint at 1,000 pages
    /// of 4,096 bytes, each with a 24-byte frame header, 4,120,032 bytes:
    /// <https://www.sqlite.org/wal.html#ckpt>, `PRAGMA wal_autocheckpoint` and `page_size` at
    /// their defaults), rounded up to whole MiB, the rest for the database file to grow by at
    /// that checkpoint. On a file system smaller than 256 MiB (a test's tmpfs, a tiny
    /// partition), a 64th of it, so that such a one is still nearly all the tier's: a judgement,
    /// not a measurement. In whole 4 KiB blocks.
    static func indexHeadroom(fileSystemBytes: Int) -> Int {
        blocksDown(min(4 << 20, max(0, fileSystemBytes) / 64))
    }

    /// A limit lowered by a full file system (or a met quota).
    struct Full: Sendable, Equatable {
        /// The limit now, bytes (a multiple of 4 KiB, below the configured one).
        var limit: Int
        /// When the fault started (uptime ns).
        var since: UInt64
        /// Bytes free on the file system when a write last failed.
        var free: Int
        /// The write failed with `EDQUOT`, not `ENOSPC`.
        var quota: Bool

        /// Of the bytes a reading finds free, those that are no room: for a quota, what was free
        /// when a write met it; none for a full file system.
        var unseen: Int { quota ? free : 0 }
    }

    enum State: Sendable, Equatable {
        case writable
        case full(Full)
        /// Since (uptime ns).
        case readOnly(since: UInt64)
    }

    enum Event: Sendable, Equatable {
        /// A write failed with `errno` while the tier held `held` bytes (counted as against the
        /// limit, the failed write's own not among them); `reading`: the file system right after,
        /// nil when `statvfs` failed. Errors other than `ENOSPC`, `EDQUOT` and `EROFS` change nothing.
        case writeFailed(errno: Int32, held: Int, reading: Reading?)
        /// A probe's reading, the tier holding `held` bytes.
        case probed(Reading, held: Int)
    }

    enum Effect: Sendable, Equatable {
        /// One line for the log.
        case say(String)
        /// The limit was lowered to `toLimit`: evict least recently used entries until the bytes
        /// counted fit it (victims counted until their files are gone).
        case evict(toLimit: Int)
        /// Probe the file system periodically until `stopProbing`.
        case startProbing
        case stopProbing
    }

    /// The cache directory, for the sentences.
    let directory: String
    /// The configured limit, bytes; changed by a reload (`DiskCache.setLimit`).
    var configuredLimit: Int
    /// Bytes a full file system is left free beyond the tier's (`indexHeadroom` for a server's
    /// tier, whose directory holds the library index; 0 for a tier alone).
    let headroom: Int
    private(set) var state = State.writable
    /// Faults started since start (`DiskCache.Statistics.spaceFaults`).
    private(set) var faults = 0

    init(directory: String, configuredLimit: Int, headroom: Int = 0) {
        self.directory = directory
        self.configuredLimit = configuredLimit
        self.headroom = max(0, headroom)
    }

    /// The limit writes are admitted against now, bytes: never above the configured one (a
    /// reload may lower it below a full file system's).
    var limit: Int {
        if case .full(let full) = state { return min(full.limit, configuredLimit) }
        return configuredLimit
    }

    /// Why the disk tier cannot keep thumbnails as configured (one sentence), or nil.
    var fault: String? {
        switch state {
        case .writable:
            return nil
        case .full(let full):
            return "the disk cache \(directory) cannot keep thumbnails within its configured limit: "
                + "\(full.quota ? "its disk quota is met" : "its file system is full") (\(full.free) bytes free); "
                + "its limit is lowered to \(full.limit) of \(configuredLimit) bytes"
        case .readOnly:
            return "the disk cache \(directory) cannot keep thumbnails: its file system is read-only"
        }
    }

    /// Feeds `event` at `now` (uptime ns) and returns what to do, in order.
    mutating func handle(_ event: Event, at now: UInt64) -> [Effect] {
        switch event {
        case .writeFailed(let errno, let held, let reading):
            switch errno {
            case EROFS: return becomeReadOnly(at: now)
            case ENOSPC, EDQUOT: return met(quota: errno == EDQUOT, held: held, free: reading?.free ?? 0, at: now)
            default: return []
            }
        case .probed(let reading, let held):
            if reading.readOnly { return becomeReadOnly(at: now) }
            switch state {
            case .writable:
                return []
            case .readOnly(let since):
                state = .writable
                return [.say("disk cache: \(directory) is writable again, after \(Self.seconds(from: since, to: now)) s read-only; "
                             + "thumbnails are kept on disk again"), .stopProbing]
            case .full(var full):
                let fits = held + reading.free - full.unseen - headroom
                if fits >= configuredLimit {
                    state = .writable
                    return [.say("disk cache: the file system of \(directory) has room again (\(reading.free) bytes free), "
                                 + "after \(Self.seconds(from: full.since, to: now)) s: the limit is back to \(configuredLimit) bytes"),
                            .stopProbing]
                }
                let lowered = full.limit
                full.limit = Self.blocksDown(max(0, fits))
                full.free = reading.free   // what the fault says is the file system now
                state = .full(full)
                return full.limit < lowered ? [.evict(toLimit: full.limit)] : []
            }
        }
    }

    /// A write met a full file system (or a quota) while `held` bytes were held and `free` free:
    /// what fits is both (for a quota, what is held), less the headroom.
    private mutating func met(quota: Bool, held: Int, free: Int, at now: UInt64) -> [Effect] {
        let before = limit
        let lowered = Self.blocksDown(min(before, max(0, held + (quota ? 0 : free) - headroom)))
        if case .full(var full) = state {
            full.limit = lowered
            full.free = free
            full.quota = quota
            state = .full(full)
            return lowered < before ? [.evict(toLimit: lowered)] : []
        }
        faults += 1
        state = .full(Full(limit: lowered, since: now, free: free, quota: quota))
        let what = quota ? "the disk quota of \(directory) is met" : "the file system of \(directory) is full"
        let left = headroom > 0 ? " (\(headroom) bytes left free for the library index)" : ""
        return [.say("disk cache: \(what) (\(free) bytes free): the limit is lowered from \(before) to \(lowered) bytes\(left), "
                     + "least recently used entries evicted to make room; raised again as space returns"),
                .evict(toLimit: lowered), .startProbing]
    }

    private mutating func becomeReadOnly(at now: UInt64) -> [Effect] {
        if case .readOnly = state { return [] }
        faults += 1
        state = .readOnly(since: now)
        return [.say("disk cache: \(directory) is read-only: thumbnails are not kept on disk (those the memory cache "
                     + "does not hold are rendered again) until it is writable again"), .startProbing]
    }

    /// `bytes` rounded down to whole 4 KiB blocks, as the tier counts files.
    private static func blocksDown(_ bytes: Int) -> Int { bytes & ~4095 }

    private static func seconds(from start: UInt64, to end: UInt64) -> UInt64 { (end - min(start, end)) / 1_000_000_000 }
}
