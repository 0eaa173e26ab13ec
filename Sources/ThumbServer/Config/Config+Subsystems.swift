#if canImport(Glibc)
import Glibc
#endif
import HTTP
import Thumbnails

/// Each subsystem's settings mapped from `Config` in one place: every key that subsystem reads
/// is copied here and nowhere else (`Thumbd` builds the subsystems from these).
extension Config {
    /// The cache and render pipeline's settings; `memoryFileBudget` comes from the open-file
    /// limit (`memoryFileBudget(maxConnections:)`).
    var pipeline: PipelineConfiguration {
        var pipeline = PipelineConfiguration(cacheDirectory: cacheDirectory)
        pipeline.memoryLimitBytes = memoryCacheBytes
        pipeline.diskLimitBytes = diskCacheBytes
        pipeline.renderWorkers = renderWorkers
        pipeline.prefetchWorkers = prefetchWorkers
        pipeline.renderQueueLimit = renderQueueLimit
        pipeline.maxSourcePixels = maxSourcePixels
        pipeline.maxSourceBytes = maxSourceBytes
        pipeline.renderDeadlineSeconds = renderTimeoutSeconds
        pipeline.memoryFileBudget = Self.memoryFileBudget(maxConnections: maxConnections)
        return pipeline
    }

    /// The routes' settings.
    var service: ServiceConfiguration {
        var service = ServiceConfiguration()
        service.grids = grids
        service.cacheControl = cacheControl
        service.unversionedCacheControl = cacheControlUnversioned
        service.webpEnabled = webp
        service.quality = quality
        service.adminToken = adminToken
        return service
    }

    /// The socket server's settings with `eventLoops` event loops (`onExchange` is left for the
    /// wiring). `max_header_bytes` bounds the request line as well as the whole head.
    func http(eventLoops: Int) -> HTTPServerConfiguration {
        var http = HTTPServerConfiguration()
        http.eventLoopCount = eventLoops
        http.host = host
        http.port = UInt16(port)
        http.maxConnections = maxConnections
        http.headerTimeout = headerTimeoutSeconds
        http.idleTimeout = idleTimeoutSeconds
        http.maxHeaderBytes = maxHeaderBytes
        http.maxRequestLineBytes = maxHeaderBytes
        http.maxBodyBytes = maxBodyBytes
        return http
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
}
