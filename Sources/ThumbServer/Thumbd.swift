import Foundation
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
            throw ConfigError("the library \(config.library) is not a readable directory")
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
        let pipeline: ThumbnailPipeline
        do {
            pipeline = try ThumbnailPipeline(configuration: pipelineConfiguration)
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot be used: \(error)")
        }
        var serviceConfiguration = ServiceConfiguration()
        serviceConfiguration.grids = config.grids
        serviceConfiguration.cacheControl = config.cacheControl
        serviceConfiguration.webpEnabled = config.webp
        serviceConfiguration.quality = config.quality
        serviceConfiguration.adminToken = config.adminToken
        let index: LibraryIndex
        do {
            index = try LibraryIndex(library: library, databasePath: config.cacheDirectory + "/index.sqlite",
                                     skipping: config.cacheDirectory)
        } catch {
            throw ConfigError("cache_dir \(config.cacheDirectory) cannot hold the library index: \(error)")
        }
        index.startWatching(interval: config.indexRescanSeconds)
        let service = ThumbService(configuration: serviceConfiguration, library: library, pipeline: pipeline, index: index)
        let accessLog = config.accessLog ? AccessLog() : nil

        var http = HTTPServerConfiguration()
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
