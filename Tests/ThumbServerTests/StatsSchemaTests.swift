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
    /// video helpers and a failing disk tier), each figure a different number; the process's
    /// figures some a server could have.
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
        (disk.writeErrors, disk.corrupt, disk.directoryFaults, disk.spaceFaults, disk.effectiveLimitBytes) = (27, 28, 29, 30, 20)
        disk.fault = "the cache directory \"/var/cache/thumbd\" was removed"
        var renders = RenderStatistics.Snapshot()
        (renders.total, renders.failed, renders.coalesced, renders.prefetch) = (31, 2, 33, 34)
        (renders.derived, renders.refused, renders.knownFailures, renders.abandoned) = (35, 36, 37, 38)
        (renders.deriveFallbacks, renders.degraded) = (39, 32)
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
        (placeholders.fromPreviews, placeholders.previewsMismatched) = (15, 4)
        (placeholders.previewReadMicroseconds, placeholders.previewReads) = (30_000, 20)
        var backfill = ThumbhashBackfill.Statistics()
        (backfill.enabled, backfill.running, backfill.passes, backfill.seconds, backfill.renders) = (true, false, 2, 10, 25)
        var video = VideoPosters.Statistics()
        (video.decoded, video.failed, video.crashes, video.hangs, video.killed) = (5, 1, 1, 0, 0)
        (video.helpersStarted, video.inFlight) = (2, 1)
        return ThumbService.StatsSnapshot(
            build: BuildInfo(version: "1.2.3", commit: "0123456789ab", libvips: "8.14.1", ffmpeg: "5.1.6-0+deb12u1",
                             libavformat: "59.27.100"),
            uptime: 12.345, requests: requests, memory: memory, disk: disk, renders: renders,
            inFlight: 2, queued: 5, flights: 4, connections: (open: 3, total: 40), failedWaits: 55, prefetch: prefetch,
            libraryAssets: 100, libraryGeneration: 9, headerReads: 101, indexWriteErrors: (listing: 56, placeholders: 57), unreadable: (files: 2, directories: 1),
            undecodableFiles: 3,
            watch: LibraryWatch.Statistics(active: true, directories: 50, events: 51, rewalks: 52, limit: 8192),
            watchInstances: 1, sourceChecks: 53,
            descriptors: DescriptorBudget(limit: 1024, maxConnections: 10_000, renderWorkers: 2, eventLoops: 2, memoryTier: true),
            descriptorShortages: 54, placeholders: placeholders, backfill: backfill, thumbhashes: (known: 70, unrenderable: 5), placeholdersFromPeers: 16,
            video: (statistics: video, decoders: 2),
            process: ProcessStatistics(cpuSeconds: 1.25, residentMemoryBytes: 52_428_800, virtualMemoryBytes: 1 << 30,
                                       openFDs: 42, maxFDs: 1024, startTimeSeconds: 1_764_800_000.37, threads: 17,
                                       vipsMemoryBytes: 4096, vipsMemoryHighwaterBytes: 8 << 20),
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

    /// Every figure of the full snapshot, in `/stats` and in `/metrics`, exactly.
    @Test func aSnapshotRendersTheseExactLines() {
        let s = Self.fullSnapshot()
        #expect(ThumbService.statsJSON(s) == Self.fullJSON + "\n")
        let lines = ThumbService.metricsText(s).split(separator: "\n", omittingEmptySubsequences: false)
        let expected = (Self.fullMetrics + "\n").split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == expected.count)
        for (line, want) in zip(lines, expected) { #expect(line == want) }
    }

    /// Parts that are not there: `null` in `/stats`, no series (and no family) in `/metrics`; a
    /// family of counts by key is declared before its first sample.
    @Test func absentPartsAreNullAndHaveNoSeries() {
        let s = Self.sparseSnapshot()
        #expect(ThumbService.statsJSON(s) == Self.sparseJSON + "\n")
        let metrics = ThumbService.metricsText(s)
        for family in ["thumbd_descriptor_budget", "thumbd_node_info", "thumbd_prefetch_forwarded_items_total",
                       "thumbd_prefetch_failed_forwards_total", "thumbd_peer_list_mismatches_total"] {
            #expect(!metrics.contains(family), "\(family)")
        }
        #expect(metrics.contains("# TYPE thumbd_http_requests_total counter\n# HELP thumbd_http_request_duration_seconds "))
        #expect(metrics.contains("\nthumbd_http_request_duration_seconds_count 0\n"))
        #expect(metrics.contains("\nthumbd_disk_cache_failing 0\n"))
        #expect(metrics.contains("\nthumbd_video_decodes_total{outcome=\"decoded\"} 0\n"))
    }

    /// The figures in one output only, each for a reason (docs/API.md): a figure added to the
    /// schema is in both unless it is added here too.
    @Test func theFiguresInOneOutputOnlyAreThese() {
        var statsOnly: [String] = [], metricsOnly: [String] = []
        func walk(_ entries: [ThumbService.StatsFigure], _ path: String) {
            for entry in entries {
                switch entry.node {
                case .figure(let key?, nil, _): statsOnly.append(path + key)
                case .figure(nil, let metric?, _): metricsOnly.append(metric.family.name + metric.labels.map { "{\($0.value)}" }.joined())
                case .figure: break
                case .object(let key, _, let children): walk(children, path + key + ".")
                }
            }
        }
        walk(ThumbService.statsSchema, "")
        #expect(statsOnly == ["requests.total", "disk_cache.fault", "renders.latency_ms.p50", "renders.latency_ms.p95",
                              "renders.latency_ms.p99", "library.generation", "library.watch.enabled", "library.watch.limit",
                              "placeholders.previews_mismatched", "placeholders.preview_ms_mean",
                              "placeholders.shrink_ms_mean", "placeholders.encode_ms_mean", "placeholders.store_ms_mean",
                              "placeholders.backfill.enabled", "placeholders.backfill.passes", "placeholders.backfill.per_second",
                              "placeholders.backfill.ms_per_asset", "video.decoders", "video.in_flight", "node.peers"])
        #expect(metricsOnly == ["thumbd_http_request_duration_seconds", "thumbd_disk_cache_failing", "thumbd_render_duration_seconds",
                                "thumbd_placeholder_seconds_total{shrink}", "thumbd_placeholder_seconds_total{encode}",
                                "thumbd_placeholder_seconds_total{store}", "thumbd_placeholder_seconds_total{preview_read}",
                                "thumbd_placeholder_seconds_total{backfill_render}"])
    }

    /// Each family is declared once: no two with one name and another kind or help.
    @Test func eachFamilyIsDeclaredOnce() {
        var seen: [String: (MetricKind, String)] = [:]
        func walk(_ entries: [ThumbService.StatsFigure]) {
            for entry in entries {
                switch entry.node {
                case .figure(_, let metric?, _):
                    let declared = seen[metric.family.name] ?? (metric.family.kind, metric.family.help)
                    #expect(declared.0 == metric.family.kind && declared.1 == metric.family.help, "\(metric.family.name)")
                    seen[metric.family.name] = declared
                case .figure: break
                case .object(_, _, let children): walk(children)
                }
            }
        }
        walk(ThumbService.statsSchema)
    }

    /// `promtool check metrics` (Prometheus' own linter: names, types, units, help) finds nothing
    /// in either snapshot's `/metrics`. Skipped where promtool is not installed (Debian:
    /// `apt-get install prometheus`).
    @Test(.enabled(if: StatsSchemaTests.promtool != nil))
    func promtoolFindsNothingToLint() throws {
        for snapshot in [Self.fullSnapshot(), Self.sparseSnapshot()] {
            let (status, output) = try Self.promtoolCheck(ThumbService.metricsText(snapshot))
            #expect(status == 0, "\(output)")
            #expect(output.isEmpty, "\(output)")
        }
    }

    static let promtool: String? = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `promtool check metrics` on `text`: its exit status and what it wrote.
    static func promtoolCheck(_ text: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: promtool ?? "promtool")
        process.arguments = ["check", "metrics"]
        let input = Pipe(), output = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, output, output)
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let written = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: written, as: UTF8.self))
    }
}
