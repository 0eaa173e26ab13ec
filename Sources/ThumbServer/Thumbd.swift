import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Library
import Rendering
import Thumbnails

/// A whole thumbd server built from a `Config`: the library, the pipeline, the routes and the
/// socket server, wired together. The executable and the end-to-end tests both use it.
public final class Thumbd: Sendable {
    public let config: Config
    public let service: ThumbService
    public let server: HTTPServer
    /// How the open-file limit is shared out (decided in `init`, after raising the soft limit).
    public let descriptors: DescriptorBudget
    /// The soft open-file limit before `init` raised it to the hard limit; nil when it was
    /// already there (or could not be read).
    public let raisedOpenFileLimitFrom: Int?
    private let accessLog: AccessLog?

    /// Checks the library and cache directory and sets up libvips; does not bind yet.
    /// `eventLoops`: HTTP event loops (socket threads), one per core when nil (the default).
    /// `renderer`: libvips (`Renderer`) with `video_decoders` helpers of this very binary
    /// (`/proc/self/exe --video-helper`) when nil (the default); tests give a stand-in whose
    /// renders they hold, or a `Renderer` whose helpers are the built `thumbd`.
    /// - Throws: `ConfigError` with one sentence naming the path or key at fault.
    public init(config: Config, eventLoops: Int? = nil,
                renderer: (any ThumbnailRendering)? = nil) throws(ConfigError) {
        let renderer = renderer ?? Renderer(videoPosters: config.videoPosters())
        try ConfigLoader.validate(config)
        self.config = config
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
        do {
            try Vips.start()
        } catch {
            throw ConfigError("libvips could not start: \(error)")
        }
        // libcrypto reads its config file (/usr/lib/ssl/openssl.cnf) and the time zone at its
        // first use: here, so that no request (a flood of bad signatures) touches a file.
        Crypto.start()
        // The open-file limit, raised to the hard limit first, shared out once (`DescriptorBudget`).
        let loops = eventLoops ?? ProcessInfo.processInfo.activeProcessorCount
        let raised = DescriptorBudget.raiseLimit()
        let descriptors = DescriptorBudget(
            limit: raised?.after ?? 1024, maxConnections: config.maxConnections,
            renderWorkers: config.renderWorkers > 0 ? config.renderWorkers : ProcessInfo.processInfo.activeProcessorCount,
            eventLoops: max(loops, 1), memoryTier: config.memoryCacheBytes > 0)
        let pipeline: ThumbnailPipeline
        do {
            pipeline = try ThumbnailPipeline(configuration: config.pipeline(descriptors: descriptors, libraryRoot: library.root),
                                             renderer: renderer)
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(error)")
        }
        let index: LibraryIndex
        do {
            index = try LibraryIndex(library: library, databasePath: config.cacheDirectory + "/index.sqlite")
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot hold the library index: \(error)")
        }
        pipeline.placeholders.keep(in: index)
        if !index.persisted {
            FileHandle.standardError.write(Data(("thumbd: \(config.cacheDirectory)/index.sqlite cannot be used ("
                + (index.notPersistedBecause ?? "busy, not writable, or not thumbd's") + "; a file that is not thumbd's "
                + "is left as it is); the library index is kept in memory for this run, and a restart reads every "
                + "header again\n").utf8))
        }
        // A cache thumbd may read but not write is served from (a pre-warmed, read-only copy),
        // but nothing rendered is kept on disk: said once, so that it is not a surprise.
        if access(config.cacheDirectory + "/entries", W_OK) != 0 || access(config.cacheDirectory + "/tmp", W_OK) != 0 {
            Self.warn("cache_dir \(config.cacheDirectory) is not writable by this user: thumbnails are served from what it "
                + "holds and rendered again after a restart, and disk_cache.write_errors counts each one not kept")
        }
        // One inotify instance for the whole server (one watch per directory of the user's
        // fs.inotify.max_user_watches, whatever the core count), asked through one probe per HTTP
        // event loop, so that a hit shares no lock with the other loops (see `LibraryWatch`).
        let lanes = max(loops, 1)
        var watches = [LibraryWatch?](repeating: nil, count: lanes)
        if config.libraryWatch {
            let userLimit = LibraryWatch.userWatchLimit()
            let maxWatches = userLimit.map { Int(Double($0) * config.libraryWatchMaxShare) } ?? Int.max
            var setupFailure: LibraryWatch.SetupError?
            do {
                watches = try LibraryWatch.makeGroup(root: library.root, count: lanes, maxWatches: maxWatches,
                                                     retrySeconds: config.indexRescanSeconds)
            } catch {
                setupFailure = error
            }
            let statistics = watches.first??.statistics
            if let setupFailure {
                Self.warn("library_watch: no inotify watch of \(library.root) could be set up (\(setupFailure)); memoised "
                    + "URLs will be resolved again on every request (or set library_watch to false to stat sources instead)")
            } else if let statistics, statistics.overLimit, let userLimit {
                Self.warn("library_watch: \(library.root) has more than \(maxWatches) directories, more than "
                    + "library_watch_max_share (\(config.libraryWatchMaxShare)) of fs.inotify.max_user_watches (\(userLimit)) "
                    + "allows; not watching it, so that other programs can still watch theirs: memoised URLs will be resolved "
                    + "again on every request (raise fs.inotify.max_user_watches or library_watch_max_share, or set "
                    + "library_watch to false to stat sources instead)")
            } else if statistics?.active != true, let unwatched = watches.first??.unwatchedDirectories, !unwatched.isEmpty {
                Self.warn(Self.unwatchedWarning(unwatched, root: library.root, retrySeconds: config.indexRescanSeconds))
            }
        }
        // The listing follows the watch's events (a whole rescan only when it loses track, while it
        // cannot see everything, and at the safety sweep); without a watch it polls.
        if let feed = watches.first ?? nil {
            index.follow(feed, pollSeconds: config.indexRescanSeconds, sweepSeconds: config.indexSweepSeconds)
        } else {
            index.startWatching(interval: config.indexRescanSeconds)
        }
        let service = ThumbService(configuration: config.service(descriptors: descriptors), library: library, pipeline: pipeline, index: index,
                                   watches: watches)
        if config.thumbhashBackfill { service.backfill.start() }
        let accessLog = config.accessLog ? AccessLog() : nil

        var http = config.http(eventLoops: loops, descriptors: descriptors)
        let requests = service.requests
        http.onExchange = { exchange in
            requests.record(exchange)
            accessLog?.write(exchange)
        }
        let server = HTTPServer(configuration: http, responder: service)
        // Weak: the server holds the service as its responder; a strong capture would be a cycle.
        service.setConnectionCounts { [weak server] in server?.connectionCounts ?? (0, 0) }
        service.setVideoPosters((renderer as? Renderer)?.videoPosters)
        self.service = service
        self.server = server
        self.descriptors = descriptors
        raisedOpenFileLimitFrom = raised.flatMap { $0.before < $0.after ? $0.before : nil }
        self.accessLog = accessLog
    }

    /// The start-up warning for directories the watch could not watch, each with its real
    /// cause (`LibraryWatch.cause(of:)`: EACCES is the directory's permissions, ENOSPC the
    /// inotify limit): the first three named, the rest counted.
    static func unwatchedWarning(_ unwatched: [LibraryWatch.UnwatchedDirectory], root: String, retrySeconds: Double) -> String {
        let named = unwatched.prefix(3).map { "\($0.path): \(LibraryWatch.cause(of: $0.error))" }.joined(separator: "; ")
        let more = unwatched.count > 3 ? "; and \(unwatched.count - 3) more" : ""
        let count = unwatched.count == 1 ? "1 directory" : "\(unwatched.count) directories"
        return "library_watch: inotify cannot watch \(count) of \(root) (\(named)\(more)); memoised URLs will be "
            + "resolved again on every request until it can, and each is tried again when its permissions change "
            + "and every \(String(format: "%g", retrySeconds)) s (index_rescan_seconds)"
    }

    /// One line on stderr, `thumbd: ` first.
    static func warn(_ message: String) {
        FileHandle.standardError.write(Data(("thumbd: " + message + "\n").utf8))
    }

    /// The start-up line about descriptors: the limit (and that it was raised), how it is shared out.
    public var descriptorSummary: String {
        let raised = raisedOpenFileLimitFrom.map { "raised the open-file soft limit from \($0) to the hard limit; " } ?? ""
        return raised + descriptors.summary
    }

    /// Binds and starts serving; returns the bound port.
    /// - Throws: `ConfigError` naming the address when it cannot be bound.
    public func start() throws(ConfigError) -> UInt16 {
        do {
            return try server.start()
        } catch {
            throw ConfigError("cannot listen on \(config.host):\(config.port): \(error)")
        }
    }

    /// Stops accepting, lets in-flight requests finish (up to `shutdown_grace_seconds`), stops the
    /// render workers, then calls `completion`.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        let pipeline = service.pipeline, backfill = service.backfill
        server.shutdown(gracePeriod: config.shutdownGraceSeconds) {
            backfill.stop()
            pipeline.stop()
            completion()
        }
    }
}
