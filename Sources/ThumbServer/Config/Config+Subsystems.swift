import HTTP
import Rendering
import Thumbnails

/// Each subsystem's settings mapped from `Config` in one place: every key that subsystem reads
/// is copied here and nowhere else (`Thumbd` builds the subsystems from these).
extension Config {
    /// The cache and render pipeline's settings; the descriptors its memfds and kept-open disk
    /// entries may hold come from `descriptors`; `libraryRoot`: the library (resolved), which the
    /// cache is kept apart from if it is made again.
    func pipeline(descriptors: DescriptorBudget, libraryRoot: String) -> PipelineConfiguration {
        PipelineConfiguration(cacheDirectory: cacheDirectory, memoryLimitBytes: memoryCacheBytes,
                              diskLimitBytes: diskCacheBytes, renderWorkers: renderWorkers, prefetchWorkers: prefetchWorkers,
                              renderQueueLimit: renderQueueLimit, maxSourcePixels: maxSourcePixels,
                              maxSourceBytes: maxSourceBytes, renderDeadlineSeconds: renderTimeoutSeconds,
                              memoryFileBudget: descriptors.memoryFiles, libraryRoot: libraryRoot,
                              openDiskEntryLimit: descriptors.openDiskEntries, grids: grids, deriveGrids: deriveGrids)
    }

    /// Where videos' poster frames are decoded: `video_decoders` helpers, each decode under
    /// `video_decode_timeout_seconds` (rounded to the ms); nil when `video_decoders` is 0.
    func videoPosters(executable: String = "/proc/self/exe") -> VideoPosters? {
        guard videoDecoders > 0 else { return nil }
        return VideoPosters(configuration: .init(executable: executable, decoders: videoDecoders,
                                                 timeoutMilliseconds: Int((videoDecodeTimeoutSeconds * 1000).rounded())))
    }

    /// The routes' settings; `descriptors` is reported in `/stats`.
    func service(descriptors: DescriptorBudget?) -> ServiceConfiguration {
        let cluster = (try? ClusterPeers.node(self) ?? nil).map { peers, node in   // validated at start
            ClusterSettings(peers: peers, node: node, timeoutMilliseconds: Int((peerTimeoutSeconds * 1000).rounded()),
                            downSeconds: peerDownSeconds)
        }
        return ServiceConfiguration(
            grids: grids, cacheControl: cacheControl, unversionedCacheControl: cacheControlUnversioned, webpEnabled: webp,
            adminToken: adminToken, signing: signing, clientKeys: clientKeys,
            prefetchLimits: PrefetchLimits(concurrentJobs: prefetchClientJobs, itemsPerJob: prefetchClientItemsPerJob,
                                           itemsPerMinute: prefetchClientItemsPerMinute),
            quality: quality, cors: CORSPolicy(origins: corsOrigins), descriptors: descriptors, cluster: cluster)
    }

    /// The access log's settings (`access_log`, `access_log_file`, `trusted_proxies`).
    /// - Throws: `ConfigError` for a `trusted_proxies` entry that is not an address or range.
    func accessLogSettings() throws(ConfigError) -> AccessLog.Settings {
        AccessLog.Settings(format: accessLog, trustedProxies: try TrustedProxies(trustedProxies), file: accessLogFile)
    }

    /// The socket server's settings with `eventLoops` event loops, each exchange told to
    /// `onExchange`. `max_header_bytes` bounds the request line as well as the whole head; open
    /// connections are `descriptors.connections` (`max_connections` or fewer).
    func http(eventLoops: Int, descriptors: DescriptorBudget,
              onExchange: (@Sendable (HTTPExchangeRecord) -> Void)?) -> HTTPServerConfiguration {
        HTTPServerConfiguration(host: host, port: UInt16(port), backlog: HTTPServerConfiguration.defaultBacklog,
                                maxRequestLineBytes: maxHeaderBytes, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes,
                                headerTimeout: headerTimeoutSeconds, bodyTimeout: bodyTimeoutSeconds,
                                idleTimeout: idleTimeoutSeconds, maxConnections: descriptors.connections,
                                eventLoopCount: eventLoops, onExchange: onExchange)
    }
}
