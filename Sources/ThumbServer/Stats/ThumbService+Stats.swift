import Foundation
import Library
import Rendering
import Thumbnails
import Locking

/// `GET /stats` (docs/API.md, "Stats") and `GET /metrics` (Prometheus text format 0.0.4): the same
/// numbers, read once per request from the caches, the render statistics and the request counters.
extension ThumbService {
    /// Everything `/stats` and `/metrics` report, read at one moment.
    struct StatsSnapshot {
        /// thumbd's version and commit, and its libraries' (`BuildInfo.current` for a server).
        var build: BuildInfo
        var uptime: Double
        var requests: RequestStatistics.Snapshot
        var memory: MemoryCache.Statistics
        var disk: DiskCache.Statistics
        var renders: RenderStatistics.Snapshot
        var inFlight: Int
        var queued: Int
        var flights: Int
        var connections: (open: Int, total: Int)
        /// The event loops' failed `epoll_wait` calls (`HTTPServerCounts.failedWaits`).
        var failedWaits: Int
        var prefetch: Prefetcher.Statistics
        var libraryAssets: Int
        /// The listing's generation (`LibraryIndex.generation`), read with `libraryAssets`.
        var libraryGeneration: Int
        var headerReads: Int
        /// Writes to `index.sqlite` that failed (`LibraryIndex.failedWrites`).
        var indexWriteErrors: (listing: Int, placeholders: Int)
        /// Files and directories the index's last scan could not read.
        var unreadable: (files: Int, directories: Int)
        /// Files left out of the listing because their header does not decode here
        /// (`LibraryIndex.undecodableFiles`).
        var undecodableFiles: Int
        /// The lanes' watches together (see `ThumbService.resolvedKeys`); nil when the library
        /// is not watched (`library_watch = false`).
        var watch: LibraryWatch.Statistics?
        /// inotify instances the lanes' watches ask (1 for a server: one group shares one).
        var watchInstances: Int
        var sourceChecks: Int
        var descriptors: DescriptorBudget?
        var descriptorShortages: Int
        var placeholders: Placeholders.Statistics
        var backfill: ThumbhashBackfill.Statistics
        /// Listed images with a placeholder, and with a source that cannot be rendered.
        var thumbhashes: (known: Int, unrenderable: Int)
        /// Placeholders taken from the cluster's peers since start (0 for a single node).
        var placeholdersFromPeers: Int
        /// The video helpers' counters and how many may decode at once; nil without helpers.
        var video: (statistics: VideoPosters.Statistics, decoders: Int)?
        /// The process's own figures from /proc, and libvips' memory.
        var process: ProcessStatistics
        /// This node of a cluster; nil for a single node (no `peers`).
        var node: Node?

        /// A cluster node's figures: its address, the upstream's servers with their weights and
        /// whether this node has them marked down, and its node-to-node counters since start.
        struct Node {
            var name: String
            var peers: [(server: String, weight: Int, down: Bool)]
            var forwardedItems: Int, failedForwards: Int, peerListMismatches: Int
        }
    }

    /// Checks the disk cache's directories first (`ThumbnailPipeline.checkDiskCache`), so the
    /// disk counts are of entries that are there. Blocks on file I/O: call it off the event loops.
    func statsSnapshot() -> StatsSnapshot {
        ThreadRole.assertNot(.eventLoop, "statsSnapshot blocks on file I/O")
        pipeline.checkDiskCache()
        let pipeline = pipeline.statistics
        let listing = index.page(order: .newest, from: .offset(0), limit: 0)
        return StatsSnapshot(build: .current, uptime: requests.uptimeSeconds, requests: requests.snapshot,
                             memory: pipeline.memory, disk: pipeline.disk, renders: pipeline.renders,
                             inFlight: pipeline.running, queued: pipeline.queuedForClients + pipeline.queuedForPrefetch,
                             flights: pipeline.flights,
                             connections: server?.now ?? (0, 0), failedWaits: server?.failedWaits ?? 0,
                             prefetch: prefetcher.statistics,
                             libraryAssets: listing.total, libraryGeneration: listing.generation,
                             headerReads: index.headerReads, indexWriteErrors: index.failedWrites, unreadable: index.unreadable,
                             undecodableFiles: index.undecodableFiles, watch: watchStatistics(),
                             watchInstances: distinctWatches().count,
                             sourceChecks: resolvedKeys.reduce(0) { $0 + $1.sourceCheckCount },
                             descriptors: configuration.descriptors,
                             descriptorShortages: descriptorShortages.load(ordering: .relaxed),
                             placeholders: self.pipeline.placeholders.statistics, backfill: backfill.statistics,
                             thumbhashes: index.thumbhashCounts, placeholdersFromPeers: clusterPlaceholders?.adoptedCount ?? 0,
                             video: videoPosters.map { ($0.statistics, $0.configuration.decoders) },
                             process: .read(), node: nodeFigures())
    }

    /// This node's figures; nil for a single node.
    private func nodeFigures() -> StatsSnapshot.Node? {
        guard let settings = configuration.cluster, let cluster else { return nil }
        let s = cluster.statistics
        return StatsSnapshot.Node(name: settings.name,
                                  peers: settings.peers.enumerated().map { i, peer in (peer.server, peer.weight, s.down[i]) },
                                  forwardedItems: s.forwardedItems, failedForwards: s.failedForwards,
                                  peerListMismatches: s.peerListMismatches)
    }

    /// One watch of each inotify instance the lanes ask (a server's lanes share one).
    private func distinctWatches() -> [LibraryWatch] {
        var distinct: [LibraryWatch] = []
        for case let watch? in resolvedKeys.map(\.watch) where !distinct.contains(where: { $0.sharesInstance(with: watch) }) {
            distinct.append(watch)
        }
        return distinct
    }

    /// The lanes' watches summed over their inotify instances: active when all are; directories
    /// per instance (each watches the whole tree: the fewest any instance watches, so one that
    /// misses a directory shows); events and rewalks of all instances. Each reads what is queued
    /// first, so the figures are current without thumbnail traffic.
    private func watchStatistics() -> LibraryWatch.Statistics? {
        let all = distinctWatches().map(\.statistics)
        guard !all.isEmpty else { return nil }
        return LibraryWatch.Statistics(active: all.allSatisfy(\.active), directories: all.map(\.directories).min() ?? 0,
                                       events: all.reduce(0) { $0 + $1.events }, rewalks: all.reduce(0) { $0 + $1.rewalks },
                                       limit: all.map(\.limit).min() ?? Int.max, overLimit: all.contains(where: \.overLimit))
    }

    /// `/stats`: `statsSchema` as JSON, read from a snapshot taken now.
    func statsJSON() -> String { Self.statsJSON(statsSnapshot()) }

    /// `/metrics`: `statsSchema` as Prometheus text format 0.0.4, read from a snapshot taken now.
    func metricsText() -> String { Self.metricsText(statsSnapshot()) }

    static func statsJSON(_ snapshot: StatsSnapshot) -> String { StatsSchema.json(statsSchema, snapshot) }

    static func metricsText(_ snapshot: StatsSnapshot) -> String { StatsSchema.prometheus(statsSchema, snapshot) }

    /// The outcomes of a job refused by a per-client limit (`PrefetchRefusal.outcome`), in the
    /// order `/stats` and `/metrics` list them: a fixed set, whatever the clients (bounded cardinality).
    static let refusalOutcomes = ["too_many_jobs", "too_many_items", "rate_limited"]
}
