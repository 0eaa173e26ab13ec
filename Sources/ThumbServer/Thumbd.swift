import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Rendering
import Thumbnails

/// A whole thumbd server built from a `Config`: the library, the pipeline, the routes and the
/// socket server, wired together. The executable and the end-to-end tests both use it.
public final class Thumbd: Sendable {
    public let config: Config
    public let service: ThumbService
    public let server: HTTPServer
    private let accessLog: AccessLog?

    /// Checks the library and cache directory and sets up libvips; does not bind yet.
    /// - Throws: `ConfigError` with one sentence naming the path or key at fault.
    public init(config: Config) throws(ConfigError) {
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
        var pipelineConfiguration = PipelineConfiguration(cacheDirectory: config.cacheDirectory)
        pipelineConfiguration.memoryLimitBytes = config.memoryCacheBytes
        pipelineConfiguration.diskLimitBytes = config.diskCacheBytes
        pipelineConfiguration.renderWorkers = config.renderWorkers
        pipelineConfiguration.renderQueueLimit = config.renderQueueLimit
        pipelineConfiguration.maxSourcePixels = config.maxSourcePixels
        pipelineConfiguration.maxSourceBytes = config.maxSourceBytes
        pipelineConfiguration.renderDeadlineSeconds = config.renderTimeoutSeconds
        pipelineConfiguration.memoryFileBudget = Self.memoryFileBudget(maxConnections: config.maxConnections)
        let pipeline: ThumbnailPipeline
        do {
            pipeline = try ThumbnailPipeline(configuration: pipelineConfiguration)
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(error)")
        }
        var serviceConfiguration = ServiceConfiguration()
        serviceConfiguration.grids = config.grids
        serviceConfiguration.cacheControl = config.cacheControl
        serviceConfiguration.unversionedCacheControl = config.cacheControlUnversioned
        serviceConfiguration.webpEnabled = config.webp
        serviceConfiguration.quality = config.quality
        serviceConfiguration.adminToken = config.adminToken
        let index: LibraryIndex
        do {
            index = try LibraryIndex(library: library, databasePath: config.cacheDirectory + "/index.sqlite")
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot hold the library index: \(error)")
        }
        index.startWatching(interval: config.indexRescanSeconds)
        // One watch per HTTP event loop (up to 8), each with its own inotify instance: a hit asks
        // its own loop's instance whether anything changed, sharing no kernel lock with the others.
        let loops = ProcessInfo.processInfo.activeProcessorCount
        let lanes = min(max(loops, 1), 8)
        var watches = [LibraryWatch?](repeating: nil, count: lanes)
        if config.libraryWatch {
            watches = LibraryWatch.group(root: library.root, count: lanes) ?? watches
            if !watches.allSatisfy({ $0?.statistics.active == true }) {
                FileHandle.standardError.write(Data(("thumbd: library_watch: inotify cannot watch all of \(library.root) "
                    + "(see fs.inotify.max_user_watches and max_user_instances); memoised URLs will be resolved again on every "
                    + "request\n").utf8))
            }
        }
        let service = ThumbService(configuration: serviceConfiguration, library: library, pipeline: pipeline, index: index,
                                   watches: watches)
        let accessLog = config.accessLog ? AccessLog() : nil

        var http = HTTPServerConfiguration()
        http.queueCount = loops
        http.host = config.host
        http.port = UInt16(config.port)
        http.maxConnections = config.maxConnections
        http.headerTimeout = config.headerTimeoutSeconds
        http.idleTimeout = config.idleTimeoutSeconds
        http.maxHeaderBytes = config.maxHeaderBytes
        http.maxRequestLineBytes = config.maxHeaderBytes
        http.maxBodyBytes = config.maxBodyBytes
        let requests = service.requests
        http.onExchange = { exchange in
            requests.record(exchange)
            accessLog?.write(exchange)
        }
        let server = HTTPServer(configuration: http, responder: service)
        // Weak: the server holds the service as its responder; a strong capture would be a cycle.
        service.setConnectionCounts { [weak server] in server?.connectionCounts ?? (0, 0) }
        self.service = service
        self.server = server
        self.accessLog = accessLog
    }

    /// How many memory-tier thumbnails may each hold a descriptor (a sealed memfd): what the
    /// open-file limit (raised to its hard limit when serving starts) leaves after
    /// `maxConnections` and 1,024 for everything else (disk entries kept open, renders, the
    /// index). `0` when nothing is left: the memory tier then keeps arrays only.
    static func memoryFileBudget(maxConnections: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return max(0, min(Int(clamping: limit.rlim_max), 1 << 20) - maxConnections - 1024)
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
        let pipeline = service.pipeline
        server.shutdown(gracePeriod: config.shutdownGraceSeconds) {
            pipeline.scheduler.stop()
            completion()
        }
    }
}
