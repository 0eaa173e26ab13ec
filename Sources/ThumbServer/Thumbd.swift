import Console
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Library
import Rendering
import Synchronization
import Thumbnails

/// A whole thumbd server built from a `Config`: the library, the pipeline, the routes and the
/// socket server, wired together. The executable and the end-to-end tests both use it.
///
/// Three steps, each doing one kind of thing: `Resources.open` does the I/O a server needs before
/// it can be wired (the library, the disk tier, the index, the library watch) and throws what an
/// operator must fix; `init(config:resources:renderer:)` only wires (no file, socket or process
/// state touched; nothing set on an object after it is built); `start()` does the side effects
/// (warnings said, the index followed, the backfill started, the socket bound).
/// Process-wide state (signals, limits, libvips) is `ProcessSetup`'s, done before all three.
public final class Thumbd: Sendable {
    /// The configuration in force: the start's, with what each reload changed (`reload`).
    public var config: Config { current.withLock { $0 } }
    /// Its one lock, held through a whole reload, so that two reloads never interleave.
    let current: Mutex<Config>
    public let service: ThumbService
    public let server: HTTPServer
    /// How the open-file limit is shared out.
    public let descriptors: DescriptorBudget
    /// What `ProcessSetup.prepare` found (the open-file limit, and whether it raised it).
    public let process: ProcessSetup.Report
    /// What opening found that an operator should know, one sentence each: said on stderr by
    /// `start()`.
    public let warnings: [String]
    /// The access log (`access_log`): off, or lines to stdout or `access_log_file`.
    let accessLog: AccessLog
    /// The watch whose events the listing follows; nil: the listing polls.
    private let listingFeed: LibraryWatch?
    private let servingStarted = Atomic<Bool>(false)
    /// The cache directory's lock, let go when the server has stopped.
    private let cacheLock: CacheLock
    /// Where systemd hears READY=1, STOPPING=1 and WATCHDOG=1; nil when not run by systemd.
    public let notifier: SystemdNotifier?
    /// Set by `shutdown`: the watchdog's pings stop.
    private let stopping = Atomic<Bool>(false)

    /// Opens (`Resources.open`) and wires (`init(config:resources:renderer:)`).
    /// `process`: what `ProcessSetup.prepare` returned (call it first). `eventLoops`: HTTP event
    /// loops (socket threads), one per core when nil (the default). `renderer`: libvips
    /// (`Renderer`) with `video_decoders` helpers of this very binary (`/proc/self/exe
    /// --video-helper`) when nil (the default); tests give a stand-in whose renders they hold, or
    /// a `Renderer` whose helpers are the built `thumbd`. `listening`: bind the port before the
    /// cache directory is made (`Resources.open`). `notifier`: systemd's notification socket
    /// (`SystemdNotifier(environment:)`), told when the server is ready and stopping.
    /// - Throws: `ConfigError` with one sentence naming the path or key at fault.
    public convenience init(config: Config, process: ProcessSetup.Report, eventLoops: Int? = nil,
                            renderer: (any ThumbnailRendering)? = nil, listening: Bool = false,
                            notifier: SystemdNotifier? = nil) throws(ConfigError) {
        let resources = try Resources.open(config, process: process, eventLoops: eventLoops, listening: listening)
        self.init(config: config, resources: resources, renderer: renderer ?? Renderer(videoPosters: config.videoPosters()),
                  notifier: notifier)
    }

    /// Wires a server from opened `resources`: no I/O. The render workers are made here (parked
    /// until work is queued); nothing else runs until `start()`. `notifier`: see above.
    public init(config: Config, resources: Resources, renderer: any ThumbnailRendering, notifier: SystemdNotifier? = nil) {
        current = Mutex(config)
        process = resources.process
        descriptors = resources.descriptors
        let pipeline = ThumbnailPipeline(configuration: config.pipeline(descriptors: descriptors, libraryRoot: resources.library.root),
                                         disk: resources.disk, renderer: renderer, placeholderStore: resources.index)
        let serverCounts = HTTPServerCounts()
        service = ThumbService(configuration: config.service(descriptors: descriptors), library: resources.library,
                               pipeline: pipeline, index: resources.index, watches: resources.watches,
                               server: serverCounts, videoPosters: (renderer as? Renderer)?.videoPosters)
        let accessLog = resources.accessLog
        let requests = service.requests
        let http = config.http(eventLoops: resources.watches.count, descriptors: descriptors) { exchange in
            requests.record(exchange)
            accessLog.write(exchange)
        }
        server = HTTPServer(configuration: http, responder: service, counts: serverCounts, listener: resources.listener)
        cacheLock = resources.lock
        self.notifier = notifier
        self.accessLog = accessLog
        warnings = resources.warnings
        listingFeed = resources.watches.first ?? nil
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

    /// Reopens `access_log_file` (SIGUSR1, after logrotate moved it): lines written before go
    /// to the old file, lines after to the new one. Nothing when the log goes to stdout.
    public func reopenAccessLog() {
        accessLog.reopen()
    }

    /// One line on stderr, `thumbd: ` first (`Console.warn`).
    public static func warn(_ message: String) {
        Console.warn(message)
    }

    /// The start-up line about descriptors: the limit (and that it was raised), how it is shared out.
    public var descriptorSummary: String {
        let raised = process.raisedOpenFileLimitFrom.map { "raised the open-file soft limit from \($0) to the hard limit; " } ?? ""
        return raised + descriptors.summary
    }

    /// `startServing()`, then binds (unless `Resources.open` did) and starts accepting; then
    /// tells systemd `READY=1` and starts the watchdog (`notifier`). Returns the bound port.
    /// - Throws: `ConfigError` naming the address when it cannot be bound.
    public func start() throws(ConfigError) -> UInt16 {
        startServing()
        let port: UInt16
        do {
            port = try server.start()
        } catch {
            throw ConfigError("cannot listen on \(config.host):\(config.port): \(error)")
        }
        if let notifier {
            notifier.send("READY=1\nSTATUS=serving \(service.library.root) on port \(port)")
            if let interval = notifier.watchdogInterval { scheduleWatchdog(notifier, every: interval) }
        }
        return port
    }

    /// Sends WATCHDOG=1 every `interval` seconds, each once every HTTP event loop has turned
    /// since the last (`HTTPServer.whenEventLoopsTurn`): a loop stuck in a handler stops the
    /// pings, and systemd restarts the server (`WatchdogSec=`, `Restart=on-failure`).
    /// Until `shutdown` (a Dispatch timer, armed again after each ping is asked for).
    private func scheduleWatchdog(_ notifier: SystemdNotifier, every interval: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [self] in
            guard !stopping.load(ordering: .relaxed) else { return }
            server.whenEventLoopsTurn { [self] in
                if !stopping.load(ordering: .relaxed) { notifier.send("WATCHDOG=1") }
            }
            scheduleWatchdog(notifier, every: interval)
        }
    }

    /// What `start()` does but listening, once (later calls return at once): says the `warnings`
    /// on stderr, has the listing follow the library (the watch's events, with a whole rescan
    /// only when it loses track and at the safety sweep; without a watch, it polls every
    /// `index_rescan_seconds`), and starts the placeholders from embedded previews
    /// (`thumbhash_previews`, before the first scan) and the backfill (`thumbhash_backfill`), and
    /// in a cluster the pull of the peers' placeholders (`ClusterPlaceholders`).
    /// Called alone by tests that drive `service` in-process.
    public func startServing() {
        guard !servingStarted.exchange(true, ordering: .relaxed) else { return }
        for warning in warnings { Self.warn(warning) }
        let index = service.index
        if config.thumbhashPreviews { service.previews.start() }
        if let listingFeed {
            index.follow(listingFeed, pollSeconds: config.indexRescanSeconds, sweepSeconds: config.indexSweepSeconds)
        } else {
            index.startWatching(interval: config.indexRescanSeconds)
        }
        if config.thumbhashBackfill { service.backfill.start() }
        service.clusterPlaceholders?.start()
    }

    /// Stops accepting, lets in-flight requests finish (up to `shutdown_grace_seconds`), stops the
    /// render workers, then calls `completion`.
    /// Tells systemd `STOPPING=1` first, and lets the cache directory's lock go once stopped.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        stopping.store(true, ordering: .relaxed)
        notifier?.send("STOPPING=1")
        let pipeline = service.pipeline, backfill = service.backfill, previews = service.previews, lock = cacheLock
        let clusterPlaceholders = service.clusterPlaceholders
        service.stopListingWaiters()   // before the drain, which waits for every response
        server.shutdown(gracePeriod: config.shutdownGraceSeconds) {
            previews.stop()
            backfill.stop()
            clusterPlaceholders?.stop()
            pipeline.stop()
            lock.release()
            completion()
        }
    }
}
