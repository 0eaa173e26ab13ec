#if canImport(Glibc)
import Glibc
#endif

/// How the process's open-file limit (`RLIMIT_NOFILE`, getrlimit(2)) is shared out, decided once
/// at start so that the parts that hold descriptors for long (client connections, the disk
/// entries kept open for `sendfile`, the memory tier's memfds) can never take them all, and a
/// render, the index or a cache write still finds one:
///
/// - `limit`: the soft limit, first raised to the hard limit (as nginx's `worker_rlimit_nofile`
///   and most servers do; `raiseLimit`), at most 2^20.
/// - `reserve`: `64 + 4 × (render workers + event loops)`, at most half the limit: standard
///   streams, the listening socket, each event loop's epoll instances and eventfd, the inotify
///   instance, Dispatch's own, the index database and its side files, the index scan and the
///   library watch's walks (a directory each), and per render its source, libvips' `dup` of it
///   and its cache entry being written.
/// - `connections`: `max_connections`, but at most what the rest leaves after a quarter of it
///   is kept for the cache tier in use (at least 1). At the cap the server stops accepting and
///   new clients wait in the kernel's listen backlog until a connection closes.
/// - `openDiskEntries` (memory tier off): disk entries kept open, at most 256 (the most
///   `DiskCache` keeps by default) and what connections leave.
/// - `memoryFiles` (memory tier on): memory-tier entries held in memfds: what connections leave.
///
/// What still finds no descriptor (EMFILE or ENFILE at an open) is answered 503
/// `out_of_descriptors` with `Retry-After`, and counted (`descriptors.shortages` in `/stats`).
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors the process may hold: the soft `RLIMIT_NOFILE` (after `raiseLimit`), at most 2^20.
    public let limit: Int
    /// Kept for renders, the index, cache writes and the server's own descriptors.
    public let reserve: Int
    /// Client connections open at once (`HTTPServerConfiguration.maxConnections`).
    public let connections: Int
    /// Disk entries kept open for `sendfile` (`PipelineConfiguration.openDiskEntryLimit`);
    /// 0 while the memory tier is on (it does not use them).
    public let openDiskEntries: Int
    /// Memory-tier entries that may hold a memfd (`PipelineConfiguration.memoryFileBudget`);
    /// 0 while the memory tier is off.
    public let memoryFiles: Int

    /// The most disk entries kept open when descriptors are plenty (as `DiskCache`'s default). `256`.
    public static let openDiskEntryCeiling = 256

    /// - Parameters:
    ///   - limit: the open-file soft limit (descriptors); clamped to 1...2^20.
    ///   - maxConnections: `max_connections`, the most the operator wants open.
    ///   - renderWorkers: render threads (resolved: never 0).
    ///   - eventLoops: HTTP event loops.
    ///   - memoryTier: whether the memory tier keeps anything (`memory_cache_bytes` > 0).
    public init(limit: Int, maxConnections: Int, renderWorkers: Int, eventLoops: Int, memoryTier: Bool) {
        let limit = min(max(limit, 1), 1 << 20)
        let reserve = min(64 + 4 * (max(renderWorkers, 1) + max(eventLoops, 1)), limit / 2)
        let available = limit - reserve
        let cacheShare = memoryTier ? available / 4 : min(Self.openDiskEntryCeiling, available / 4)
        let connections = max(1, min(maxConnections, available - cacheShare))
        let left = max(0, available - connections)
        self.limit = limit
        self.reserve = reserve
        self.connections = connections
        openDiskEntries = memoryTier ? 0 : min(Self.openDiskEntryCeiling, left)
        memoryFiles = memoryTier ? left : 0
    }

    /// The soft and hard `RLIMIT_NOFILE` now (descriptors; `RLIM_INFINITY` as `Int.max`), nil
    /// when getrlimit(2) fails.
    public static func currentLimits() -> (soft: Int, hard: Int)? {
        var limits = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return nil }
        return (Int(clamping: limits.rlim_cur), Int(clamping: limits.rlim_max))
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (setrlimit(2); raising the soft limit
    /// needs no privilege). Returns the soft limit before and after, descriptors (equal when it
    /// was already at the hard limit or could not be raised); nil when getrlimit(2) fails.
    @discardableResult
    public static func raiseLimit() -> (before: Int, after: Int)? {
        var limits = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0 else { return nil }
        let before = Int(clamping: limits.rlim_cur)
        if limits.rlim_cur < limits.rlim_max {
            limits.rlim_cur = limits.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
        }
        return (before, currentLimits()?.soft ?? before)
    }

    /// One sentence for the start-up line: the limit and how it is shared out.
    public var summary: String {
        let cache = memoryFiles > 0 || openDiskEntries == 0
            ? "\(memoryFiles) memory-cache memfds" : "\(openDiskEntries) disk-cache entries kept open"
        return "open-file limit \(limit): up to \(connections) connections, \(cache), \(reserve) kept for renders, "
            + "the index and the cache"
    }
}
