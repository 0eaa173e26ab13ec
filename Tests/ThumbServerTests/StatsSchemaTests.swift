import Foundation
import Testing
@testable import Library
@testable import Rendering
@testable import Thumbnails
@testable import ThumbServer

/// `/stats` and `/metrics` rendered from one `statsSchema` (issue 27), on snapshots whose every
/// figure is known.
@Suite struct StatsSchemaTests {
    /// A snapshot with every part present (a cluster node with a watch, a descriptor budget,
    /// video helpers and a failing disk tier), each figure a different number.
    static func fullSnapshot() -> ThumbService.StatsSnapshot {
        var requests = RequestStatistics.Snapshot()
        requests.total = 7
        requests.byStatus = [404: 1, 200: 5, 499: 1]
        requests.durationBuckets = [1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7]
        requests.durationSumSeconds = 0.125
        var memory = MemoryCache.Statistics()
        (memory.entries, memory.bytes, memory.limitBytes) = (3, 3000, 1 << 20)
        (memory.hits, memory.misses, memory.evictions) = (11, 12, 13)
        var disk = DiskCache.Statistics()
        (disk.entries, disk.bytes, disk.limitBytes, disk.hits, disk.misses, disk.evictions) = (21, 22, 23, 24, 25, 26)
        (disk.writeErrors, disk.corrupt, disk.directoryFaults) = (27, 28, 29)
        disk.fault = "the cache directory \"/var/cache/thumbd\" was removed"
        var renders = RenderStatistics.Snapshot()
        (renders.total, renders.failed, renders.coalesced, renders.prefetch) = (31, 2, 33, 34)
        (renders.derived, renders.refused, renders.knownFailures, renders.abandoned) = (35, 36, 37, 38)
        (renders.p50Milliseconds, renders.p95Milliseconds, renders.p99Milliseconds) = (4.26, 17.04, 80.96)
        renders.durationBuckets = [0, 1, 5, 10, 20, 25, 27, 28, 29, 29, 29]
        renders.durationSumSeconds = 3.5
        var prefetch = Prefetcher.Statistics()
        (prefetch.jobs, prefetch.queued, prefetch.done, prefetch.skipped) = (41, 42, 43, 44)
        (prefetch.failed, prefetch.notStored, prefetch.cancelled, prefetch.late) = (45, 46, 47, 48)
        prefetch.catchingUp = true
        prefetch.refused = ["too_many_jobs": 1, "rate_limited": 3]
        var placeholders = Placeholders.Statistics()
        (placeholders.fromRenders, placeholders.backfilled, placeholders.backfillFailed) = (60, 20, 3)
        (placeholders.shrinkMicroseconds, placeholders.encodeMicroseconds, placeholders.storeMicroseconds) = (8000, 4000, 1600)
        placeholders.backfillRenderMicroseconds = 50_000
        var backfill = ThumbhashBackfill.Statistics()
        (backfill.enabled, backfill.running, backfill.passes, backfill.seconds, backfill.renders) = (true, false, 2, 10, 25)
        var video = VideoPosters.Statistics()
        (video.decoded, video.failed, video.crashes, video.hangs, video.killed) = (5, 1, 1, 0, 0)
        (video.helpersStarted, video.inFlight) = (2, 1)
        return ThumbService.StatsSnapshot(
            uptime: 12.345, requests: requests, memory: memory, disk: disk, renders: renders,
            inFlight: 2, queued: 5, flights: 4, connections: (open: 3, total: 40), prefetch: prefetch,
            libraryAssets: 100, libraryGeneration: 9, headerReads: 101, unreadable: (files: 2, directories: 1),
            watch: LibraryWatch.Statistics(active: true, directories: 50, events: 51, rewalks: 52, limit: 8192),
            watchInstances: 1, sourceChecks: 53,
            descriptors: DescriptorBudget(limit: 1024, maxConnections: 10_000, renderWorkers: 2, eventLoops: 2, memoryTier: true),
            descriptorShortages: 54, placeholders: placeholders, backfill: backfill, thumbhashes: (known: 70, unrenderable: 5),
            video: (statistics: video, decoders: 2),
            node: .init(name: "127.0.0.1:8082", peers: [("127.0.0.1:8081", 1, true), ("127.0.0.1:8082", 2, false)],
                        forwardedItems: 6, failedForwards: 1, peerListMismatches: 0))
    }

    /// The same with the optional parts absent: a single node, no watch, no server's descriptor
    /// budget, no video helpers, a disk tier that works, no request answered yet.
    static func sparseSnapshot() -> ThumbService.StatsSnapshot {
        var s = fullSnapshot()
        s.requests = RequestStatistics.Snapshot()
        s.disk.fault = nil
        (s.watch, s.watchInstances, s.descriptors, s.video, s.node) = (nil, 0, nil, nil, nil)
        return s
    }

    /// Prometheus text as its families' blocks (`# HELP`, `# TYPE`, samples), by name.
    static func families(_ text: String) -> [String: String] {
        var blocks: [String: String] = [:]
        var name = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            if line.hasPrefix("# HELP ") { name = String(line.split(separator: " ")[2]) }
            blocks[name, default: ""] += line + "\n"
        }
        return blocks
    }

    @Test(arguments: [("full", fullSnapshot()), ("sparse", sparseSnapshot())])
    func theSchemaRendersWhatTheHandWrittenCodeDid(name: String, snapshot: ThumbService.StatsSnapshot) {
        #expect(ThumbService.statsJSON(snapshot) == LegacyStats.statsJSON(snapshot), "\(name)")
        let new = Self.families(ThumbService.metricsText(snapshot)), old = Self.families(LegacyStats.metricsText(snapshot))
        #expect(new.keys.sorted() == old.keys.sorted(), "\(name)")
        for (family, block) in old { #expect(new[family] == block, "\(name) \(family)") }
    }
}
