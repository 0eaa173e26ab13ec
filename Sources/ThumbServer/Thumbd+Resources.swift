import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Library
import Thumbnails

extension Thumbd {
    /// What a server needs opened before it can be wired: the library, the disk tier (its
    /// directory claimed and scanned), the index (its SQLite file) and the library watch.
    /// `open` is the one step before `Thumbd.start()` that touches files; it starts nothing.
    public struct Resources: Sendable {
        /// What `ProcessSetup.prepare` found.
        public let process: ProcessSetup.Report
        /// How the open-file limit is shared out (from `process.openFileLimit` and the config).
        public let descriptors: DescriptorBudget
        public let library: Library
        public let disk: DiskCache
        public let index: LibraryIndex
        /// One per HTTP event loop (so their count is the loops'), all of one inotify instance;
        /// nil entries when the library is not watched (`library_watch` false, or no watch could
        /// be set up).
        public let watches: [LibraryWatch?]
        /// What opening found that an operator should know, one sentence each (`Thumbd.warnings`).
        public let warnings: [String]
        /// The listening socket, bound before anything was made on disk; nil unless `open` was
        /// asked to listen (then `start()` binds).
        public let listener: HTTPListener?
        /// The cache directory's lock, held by this server until it stops (`CacheLock`).
        public let lock: CacheLock
        /// The access log, its file (`access_log_file`) open.
        let accessLog: AccessLog

        /// Opens what a server of `config` needs. `eventLoops`: one per core when nil.
        /// `listening`: bind the port first (as the executable does), so that a port in use
        /// stops the start before the cache directory is made; false for a server driven
        /// in-process, whose `start()` binds (or which never listens).
        /// A start that fails leaves nothing on disk: the port and the config are checked before
        /// the cache directory is made, and what this start made is removed if a later step fails.
        /// - Throws: `ConfigError` with one sentence naming the path or key at fault: the
        ///   library is not a readable directory, the port cannot be bound, the cache overlaps
        ///   the library, cannot be used or is another server's (`CacheLock`), the index cannot
        ///   be kept there.
        public static func open(_ config: Config, process: ProcessSetup.Report, eventLoops: Int? = nil,
                                listening: Bool = false) throws(ConfigError) -> Resources {
            try ConfigLoader.validate(config)
            let library: Library
            do {
                library = try Library(root: config.library)
            } catch {
                // A path given as bytes that are not UTF-8 reaches here with U+FFFD in their place.
                let hint = config.library.unicodeScalars.contains("\u{FFFD}")
                    ? " (its path is not valid UTF-8, which thumbd cannot open; rename it or link to it)" : ""
                throw ConfigError("the library \(config.library) is not a readable directory" + hint)
            }
            // thumbd deletes only what it wrote; a cache sharing a tree with the photos would put
            // the two in one place.
            if let overlap = CacheDirectory.overlap(cache: config.cacheDirectory, library: library.root) {
                throw ConfigError(overlap + "; the cache must be a directory of its own, outside the library")
            }
            let listener: HTTPListener?
            if listening {
                do {
                    listener = try HTTPListener(host: config.host, port: UInt16(config.port), backlog: HTTPServerConfiguration.defaultBacklog)
                } catch {
                    throw ConfigError("cannot listen on \(config.host):\(config.port): \(error)")
                }
            } else {
                listener = nil
            }
            // Before the cache directory is made: a log file that cannot be opened stops the start.
            let accessLog = try AccessLog(settings: config.accessLogSettings())
            // Made by this start (and so undone if it fails): the cache directory and the parents above it that are missing now.
            let madeFrom = CacheDirectory.topmostMissing(config.cacheDirectory)
            do {
                try CacheDirectory.claim(config.cacheDirectory)
            } catch {
                throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(error)")
            }
            // Before the disk tier is scanned: another server's temporary files are not stale.
            let lock = try CacheLock.acquire(directory: config.cacheDirectory)
            func undo() {
                lock.release()
                if let madeFrom { CacheDirectory.unclaim(config.cacheDirectory, upTo: madeFrom) }
            }
            let loops = max(eventLoops ?? ProcessInfo.processInfo.activeProcessorCount, 1)
            let descriptors = DescriptorBudget(
                limit: process.openFileLimit, maxConnections: config.maxConnections,
                renderWorkers: config.renderWorkers > 0 ? config.renderWorkers : ProcessInfo.processInfo.activeProcessorCount,
                eventLoops: loops, memoryTier: config.memoryCacheBytes > 0)
            let disk: DiskCache
            do {
                disk = try DiskCache(configuration: config.pipeline(descriptors: descriptors, libraryRoot: library.root))
            } catch {
                undo()
                throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(error)")
            }
            let index: LibraryIndex
            do {
                index = try LibraryIndex(library: library, databasePath: config.cacheDirectory + "/index.sqlite")
            } catch {
                undo()
                throw ConfigError("cache_dir \(config.cacheDirectory) cannot hold the library index: \(error)")
            }
            var warnings: [String] = []
            if !index.persisted {
                warnings.append("\(config.cacheDirectory)/index.sqlite cannot be used ("
                    + (index.notPersistedBecause ?? "busy, not writable, or not thumbd's") + "; a file that is not thumbd's "
                    + "is left as it is); the library index is kept in memory for this run, and a restart reads every "
                    + "header again")
            }
            // A cache thumbd may read but not write is served from (a pre-warmed, read-only copy),
            // but nothing rendered is kept on disk: said once, so that it is not a surprise; what
            // becomes of the others depends on the memory tier (off at memory_cache_bytes 0).
            if access(config.cacheDirectory + "/entries", W_OK) != 0 || access(config.cacheDirectory + "/tmp", W_OK) != 0 {
                let others = config.memoryCacheBytes > 0
                    ? "the others are rendered and kept in memory only (memory_cache_bytes), so rendered again after a restart"
                    : "the others are rendered again at each request (memory_cache_bytes is 0: none is kept)"
                warnings.append("cache_dir \(config.cacheDirectory) is not writable by this user: thumbnails are served from "
                    + "what it holds, \(others), and disk_cache.write_errors counts each one not kept")
            }
            let (watches, watchWarning) = config.libraryWatch ? openWatches(config, root: library.root, lanes: loops) : ([LibraryWatch?](repeating: nil, count: loops), nil)
            if let watchWarning { warnings.append(watchWarning) }
            return Resources(process: process, descriptors: descriptors, library: library, disk: disk, index: index,
                             watches: watches, warnings: warnings, listener: listener, lock: lock, accessLog: accessLog)
        }

        /// One inotify instance for the whole server (one watch per directory of the user's
        /// fs.inotify.max_user_watches, whatever the core count), asked through one probe per
        /// HTTP event loop, so that a hit shares no lock with the other loops (see
        /// `LibraryWatch`); and what to warn of when it does not see the whole library.
        private static func openWatches(_ config: Config, root: String, lanes: Int) -> ([LibraryWatch?], String?) {
            let userLimit = LibraryWatch.userWatchLimit()
            let maxWatches = userLimit.map { Int(Double($0) * config.libraryWatchMaxShare) } ?? Int.max
            let watches: [LibraryWatch]
            do {
                watches = try LibraryWatch.makeGroup(root: root, count: lanes, maxWatches: maxWatches,
                                                     retrySeconds: config.indexRescanSeconds)
            } catch {
                return ([LibraryWatch?](repeating: nil, count: lanes),
                        "library_watch: no inotify watch of \(root) could be set up (\(error)); memoised "
                        + "URLs will be resolved again on every request (or set library_watch to false to stat sources instead)")
            }
            let statistics = watches.first?.statistics
            if let statistics, statistics.overLimit, let userLimit {
                return (watches, "library_watch: \(root) has more than \(maxWatches) directories, more than "
                    + "library_watch_max_share (\(config.libraryWatchMaxShare)) of fs.inotify.max_user_watches (\(userLimit)) "
                    + "allows; not watching it, so that other programs can still watch theirs: memoised URLs will be resolved "
                    + "again on every request (raise fs.inotify.max_user_watches or library_watch_max_share, or set "
                    + "library_watch to false to stat sources instead)")
            }
            if statistics?.active != true, let unwatched = watches.first?.unwatchedDirectories, !unwatched.isEmpty {
                return (watches, Thumbd.unwatchedWarning(unwatched, root: root, retrySeconds: config.indexRescanSeconds))
            }
            return (watches, nil)
        }
    }
}
