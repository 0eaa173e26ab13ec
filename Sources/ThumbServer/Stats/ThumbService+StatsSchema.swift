import Library
import Rendering
import Thumbnails

/// thumbd's `/stats` and `/metrics`, written once (issue 27): every figure with its `/stats` key
/// and its `/metrics` series side by side, read from one `StatsSnapshot`. To add a figure, add an
/// entry where it belongs in `/stats`: `.figure(key, family.sample(), { .integer($0.…) })` with a
/// family declared in `StatsFamily` (name, kind, help); both outputs then have it. docs/API.md
/// lists them ("Stats", "Metrics").
extension ThumbService {
    typealias StatsFigure = StatsEntry<StatsSnapshot>

    static let statsSchema: [StatsFigure] = [
        .figure("build", StatsFamily.buildInfo.sample()) { s in
            .labels([("version", s.build.version), ("commit", s.build.commit), ("libvips", s.build.libvips),
                     ("ffmpeg", s.build.ffmpeg)])
        },
        .figure("uptime_seconds", StatsFamily.uptime.sample()) { .number($0.uptime, places: 1) },
        .object("requests", [
            .statsOnly("total") { .integer($0.requests.total) },
            .figure("by_status", StatsFamily.requests.by("status")) { s in
                .counts(s.requests.byStatus.keys.sorted().map { (key: String($0), count: s.requests.byStatus[$0]!) })
            },
            .metricsOnly(StatsFamily.requestDuration.sample()) {
                .histogram(bounds: RequestStatistics.bucketBounds, buckets: $0.requests.durationBuckets,
                           sum: $0.requests.durationSumSeconds, count: $0.requests.total)
            },
        ]),
        .object("memory_cache", cacheFigures(tier: "memory", \.memory)),
        .object("disk_cache", cacheFigures(tier: "disk", \.disk) + diskCacheFigures),
        .object("renders", renderFigures),
        .object("prefetch", prefetchFigures),
        .object("library", libraryFigures),
        .object("placeholders", placeholderFigures),
        .object("connections", [
            .figure("open", StatsFamily.connectionsOpen.sample()) { .integer($0.connections.open) },
            .figure("total", StatsFamily.connectionsTotal.sample()) { .integer($0.connections.total) },
            .figure("event_loop_wait_errors", StatsFamily.eventLoopWaitErrors.sample()) { .integer($0.failedWaits) },
        ]),
        .object("descriptors", [
            .figure("limit", StatsFamily.descriptorBudget.sample("part", "limit")) { budget($0, \.limit) },
            .figure("reserve", StatsFamily.descriptorBudget.sample("part", "reserve")) { budget($0, \.reserve) },
            .figure("max_connections", StatsFamily.descriptorBudget.sample("part", "connections")) { budget($0, \.connections) },
            .figure("max_open_disk_entries", StatsFamily.descriptorBudget.sample("part", "open_disk_entries")) {
                budget($0, \.openDiskEntries)
            },
            .figure("max_memory_files", StatsFamily.descriptorBudget.sample("part", "memory_files")) { budget($0, \.memoryFiles) },
            .figure("shortages", StatsFamily.descriptorShortages.sample()) { .integer($0.descriptorShortages) },
        ]),
        .object("video", videoFigures),
        .object("process", processFigures),
        .object("node", present: { $0.node != nil }, nodeFigures),
    ]

    /// A part of the descriptor budget; `null` (no sample) when the service runs without a server.
    private static func budget(_ s: StatsSnapshot, _ part: KeyPath<DescriptorBudget, Int>) -> StatsValue {
        s.descriptors.map { .integer($0[keyPath: part]) } ?? .absent
    }

    /// The figures both cache tiers have, the tier's samples labelled `tier`.
    private static func cacheFigures<Tier: CacheTierStatistics>(tier: String, _ read: KeyPath<StatsSnapshot, Tier> & Sendable) -> [StatsFigure] {
        [
            .figure("entries", StatsFamily.cacheEntries.sample("tier", tier)) { .integer($0[keyPath: read].entries) },
            .figure("bytes", StatsFamily.cacheBytes.sample("tier", tier)) { .integer($0[keyPath: read].bytes) },
            .figure("limit_bytes", StatsFamily.cacheLimit.sample("tier", tier)) { .integer($0[keyPath: read].limitBytes) },
            .figure("hits", StatsFamily.cacheHits.sample("tier", tier)) { .integer($0[keyPath: read].hits) },
            .figure("misses", StatsFamily.cacheMisses.sample("tier", tier)) { .integer($0[keyPath: read].misses) },
            .figure("evictions", StatsFamily.cacheEvictions.sample("tier", tier)) { .integer($0[keyPath: read].evictions) },
        ]
    }

    private static let diskCacheFigures: [StatsFigure] = [
        .figure("write_errors", StatsFamily.diskWriteErrors.sample()) { .integer($0.disk.writeErrors) },
        .figure("corrupt", StatsFamily.diskCorrupt.sample()) { .integer($0.disk.corrupt) },
        .figure("directory_faults", StatsFamily.diskDirectoryFaults.sample()) { .integer($0.disk.directoryFaults) },
        .figure("space_faults", StatsFamily.diskSpaceFaults.sample()) { .integer($0.disk.spaceFaults) },
        .figure("effective_limit_bytes", StatsFamily.diskEffectiveLimit.sample()) { .integer($0.disk.effectiveLimitBytes) },
        .statsOnly("fault") { $0.disk.fault.map(StatsValue.text) ?? .absent },
        .metricsOnly(StatsFamily.diskFailing.sample()) { .flag($0.disk.fault != nil) },
    ]

    private static let renderFigures: [StatsFigure] = [
        .figure("total", StatsFamily.renders.sample()) { .integer($0.renders.total) },
        .figure("failed", StatsFamily.rendersFailed.sample()) { .integer($0.renders.failed) },
        .figure("coalesced", StatsFamily.rendersCoalesced.sample()) { .integer($0.renders.coalesced) },
        .figure("in_flight", StatsFamily.rendersInFlight.sample()) { .integer($0.inFlight) },
        .figure("queued", StatsFamily.rendersQueued.sample()) { .integer($0.queued) },
        .figure("prefetch", StatsFamily.rendersPrefetch.sample()) { .integer($0.renders.prefetch) },
        .figure("derived", StatsFamily.rendersDerived.sample()) { .integer($0.renders.derived) },
        .figure("derive_fallbacks", StatsFamily.rendersDeriveFallbacks.sample()) { .integer($0.renders.deriveFallbacks) },
        .figure("degraded", StatsFamily.rendersDegraded.sample()) { .integer($0.renders.degraded) },
        .figure("refused", StatsFamily.rendersRefused.sample()) { .integer($0.renders.refused) },
        .figure("known_failures", StatsFamily.rendersKnownFailures.sample()) { .integer($0.renders.knownFailures) },
        .figure("abandoned", StatsFamily.rendersAbandoned.sample()) { .integer($0.renders.abandoned) },
        .figure("flights", StatsFamily.rendersFlights.sample()) { .integer($0.flights) },
        .object("latency_ms", [
            .statsOnly("p50") { .number($0.renders.p50Milliseconds, places: 1) },
            .statsOnly("p95") { .number($0.renders.p95Milliseconds, places: 1) },
            .statsOnly("p99") { .number($0.renders.p99Milliseconds, places: 1) },
        ]),
        .metricsOnly(StatsFamily.renderDuration.sample()) {
            .histogram(bounds: RenderStatistics.bucketBounds, buckets: $0.renders.durationBuckets,
                       sum: $0.renders.durationSumSeconds, count: $0.renders.total - $0.renders.failed)
        },
    ]

    private static let prefetchFigures: [StatsFigure] = [
        .figure("jobs", StatsFamily.prefetchJobs.sample()) { .integer($0.prefetch.jobs) },
        .figure("queued", StatsFamily.prefetchQueued.sample()) { .integer($0.prefetch.queued) },
        .figure("done", StatsFamily.prefetchItems.sample("outcome", "done")) { .integer($0.prefetch.done) },
        .figure("skipped", StatsFamily.prefetchItems.sample("outcome", "skipped")) { .integer($0.prefetch.skipped) },
        .figure("failed", StatsFamily.prefetchItems.sample("outcome", "failed")) { .integer($0.prefetch.failed) },
        .figure("not_stored", StatsFamily.prefetchItems.sample("outcome", "not_stored")) { .integer($0.prefetch.notStored) },
        .figure("cancelled", StatsFamily.prefetchItems.sample("outcome", "cancelled")) { .integer($0.prefetch.cancelled) },
        .figure("late", StatsFamily.prefetchLate.sample()) { .integer($0.prefetch.late) },
        .figure("catching_up", StatsFamily.prefetchCatchingUp.sample()) { .flag($0.prefetch.catchingUp) },
        .figure("refused", StatsFamily.prefetchRefused.by("outcome")) { s in
            .counts(refusalOutcomes.map { (key: $0, count: s.prefetch.refused[$0] ?? 0) })
        },
    ]

    private static let libraryFigures: [StatsFigure] = [
        .figure("assets", StatsFamily.libraryAssets.sample()) { .integer($0.libraryAssets) },
        .statsOnly("generation") { .integer($0.libraryGeneration) },
        .figure("header_reads", StatsFamily.libraryHeaderReads.sample()) { .integer($0.headerReads) },
        .figure("index_write_errors", StatsFamily.indexWriteErrors.sample()) { .integer($0.indexWriteErrors.listing) },
        .figure("source_checks", StatsFamily.librarySourceChecks.sample()) { .integer($0.sourceChecks) },
        .figure("unreadable_files", StatsFamily.libraryUnreadable.sample("kind", "file")) { .integer($0.unreadable.files) },
        .figure("unreadable_directories", StatsFamily.libraryUnreadable.sample("kind", "directory")) {
            .integer($0.unreadable.directories)
        },
        .figure("undecodable_files", StatsFamily.libraryUndecodable.sample()) { .integer($0.undecodableFiles) },
        .object("watch", [
            .statsOnly("enabled") { .flag($0.watch != nil) },
            .figure("instances", StatsFamily.watchInstances.sample()) { .integer($0.watchInstances) },
            .figure("active", StatsFamily.watchActive.sample()) { .flag($0.watch?.active ?? false) },
            .figure("directories", StatsFamily.watchDirectories.sample()) { .integer($0.watch?.directories ?? 0) },
            .statsOnly("limit") { s in s.watch.flatMap { $0.limit == Int.max ? nil : StatsValue.integer($0.limit) } ?? .absent },
            .figure("over_limit", StatsFamily.watchOverLimit.sample()) { .flag($0.watch?.overLimit ?? false) },
            .figure("events", StatsFamily.watchEvents.sample()) { .integer($0.watch?.events ?? 0) },
            .figure("rewalks", StatsFamily.watchRewalks.sample()) { .integer($0.watch?.rewalks ?? 0) },
        ]),
    ]

    private static let placeholderFigures: [StatsFigure] = [
        .figure("known", StatsFamily.placeholders.sample("state", "known")) { .integer($0.thumbhashes.known) },
        .figure("unrenderable", StatsFamily.placeholders.sample("state", "unrenderable")) { .integer($0.thumbhashes.unrenderable) },
        .figure("missing", StatsFamily.placeholders.sample("state", "missing")) {
            .integer(max(0, $0.libraryAssets - $0.thumbhashes.known - $0.thumbhashes.unrenderable))
        },
        .figure("from_renders", StatsFamily.placeholdersMade.sample("by", "render")) { .integer($0.placeholders.fromRenders) },
        .figure("backfilled", StatsFamily.placeholdersMade.sample("by", "backfill")) { .integer($0.placeholders.backfilled) },
        .figure("from_previews", StatsFamily.placeholdersMade.sample("by", "preview")) { .integer($0.placeholders.fromPreviews) },
        .figure("from_peers", StatsFamily.placeholdersFromPeers.sample()) { .integer($0.placeholdersFromPeers) },
        .statsOnly("previews_mismatched") { .integer($0.placeholders.previewsMismatched) },
        .statsOnly("preview_ms_mean") { s in
            .number(Double(s.placeholders.previewReadMicroseconds) / 1000 / Double(max(1, s.placeholders.previewReads)), places: 2)
        },
        .figure("backfill_failed", StatsFamily.backfillFailed.sample()) { .integer($0.placeholders.backfillFailed) },
        .figure("write_errors", StatsFamily.placeholderWriteErrors.sample()) { .integer($0.indexWriteErrors.placeholders) },
        .statsOnly("shrink_ms_mean") { meanMilliseconds($0, \.shrinkMicroseconds) },
        .statsOnly("encode_ms_mean") { meanMilliseconds($0, \.encodeMicroseconds) },
        .statsOnly("store_ms_mean") { meanMilliseconds($0, \.storeMicroseconds) },
        .metricsOnly(StatsFamily.placeholderSeconds.sample("step", "shrink")) { seconds($0.placeholders.shrinkMicroseconds) },
        .metricsOnly(StatsFamily.placeholderSeconds.sample("step", "encode")) { seconds($0.placeholders.encodeMicroseconds) },
        .metricsOnly(StatsFamily.placeholderSeconds.sample("step", "store")) { seconds($0.placeholders.storeMicroseconds) },
        .metricsOnly(StatsFamily.placeholderSeconds.sample("step", "preview_read")) { seconds($0.placeholders.previewReadMicroseconds) },
        .metricsOnly(StatsFamily.placeholderSeconds.sample("step", "backfill_render")) {
            seconds($0.placeholders.backfillRenderMicroseconds)
        },
        .object("backfill", [
            .statsOnly("enabled") { .flag($0.backfill.enabled) },
            .figure("running", StatsFamily.backfillRunning.sample()) { .flag($0.backfill.running) },
            .statsOnly("passes") { .integer($0.backfill.passes) },
            .figure("renders", StatsFamily.backfillRenders.sample()) { .integer($0.backfill.renders) },
            .figure("seconds", StatsFamily.backfillSeconds.sample()) { .number($0.backfill.seconds, places: 1) },
            .statsOnly("per_second") { s in
                .number(s.backfill.seconds > 0 ? Double(s.backfill.renders) / s.backfill.seconds : 0, places: 1)
            },
            .statsOnly("ms_per_asset") { s in
                .number(Double(s.placeholders.backfillRenderMicroseconds) / 1000 / Double(max(1, s.backfill.renders)), places: 1)
            },
        ]),
    ]

    /// A placeholder step's mean per placeholder made (beside a render, by the backfill, from a
    /// preview), ms.
    private static func meanMilliseconds(_ s: StatsSnapshot, _ total: KeyPath<Placeholders.Statistics, Int>) -> StatsValue {
        let made = max(1, s.placeholders.fromRenders + s.placeholders.backfilled + s.placeholders.fromPreviews)
        return .number(Double(s.placeholders[keyPath: total]) / 1000 / Double(made), places: 2)
    }

    private static func seconds(_ microseconds: Int) -> StatsValue {
        .number(Double(microseconds) / 1e6, places: 6)
    }

    private static let videoFigures: [StatsFigure] = [
        .statsOnly("decoders") { .integer($0.video?.decoders ?? 0) },
        .figure("decoded", StatsFamily.videoDecodes.sample("outcome", "decoded")) { .integer($0.video?.statistics.decoded ?? 0) },
        .figure("failed", StatsFamily.videoDecodes.sample("outcome", "failed")) { .integer($0.video?.statistics.failed ?? 0) },
        .figure("crashes", StatsFamily.videoHelperFaults.sample("kind", "crash")) { .integer($0.video?.statistics.crashes ?? 0) },
        .figure("hangs", StatsFamily.videoHelperFaults.sample("kind", "hang")) { .integer($0.video?.statistics.hangs ?? 0) },
        .figure("killed", StatsFamily.videoHelperFaults.sample("kind", "killed")) { .integer($0.video?.statistics.killed ?? 0) },
        .figure("helpers_started", StatsFamily.videoHelpersStarted.sample()) {
            .integer($0.video?.statistics.helpersStarted ?? 0)
        },
        .statsOnly("in_flight") { .integer($0.video?.statistics.inFlight ?? 0) },
    ]

    /// As Prometheus' client libraries name and read them (`process_*`), and thumbd's own.
    private static let processFigures: [StatsFigure] = [
        .figure("cpu_seconds", StatsFamily.processCPU.sample()) { .number($0.process.cpuSeconds, places: 2) },
        .figure("resident_memory_bytes", StatsFamily.processResident.sample()) { .integer($0.process.residentMemoryBytes) },
        .figure("virtual_memory_bytes", StatsFamily.processVirtual.sample()) { .integer($0.process.virtualMemoryBytes) },
        .figure("open_fds", StatsFamily.processOpenFDs.sample()) { .integer($0.process.openFDs) },
        .figure("max_fds", StatsFamily.processMaxFDs.sample()) { .integer($0.process.maxFDs) },
        .figure("start_time_seconds", StatsFamily.processStartTime.sample()) { .number($0.process.startTimeSeconds, places: 2) },
        .figure("threads", StatsFamily.threads.sample()) { .integer($0.process.threads) },
        .figure("vips_memory_bytes", StatsFamily.vipsMemory.sample()) { .integer($0.process.vipsMemoryBytes) },
        .figure("vips_memory_highwater_bytes", StatsFamily.vipsMemoryHighwater.sample()) {
            .integer($0.process.vipsMemoryHighwaterBytes)
        },
    ]

    private static let nodeFigures: [StatsFigure] = [
        .figure("name", StatsFamily.nodeInfo.by("node")) { .text($0.node?.name ?? "") },
        .statsOnly("peers") { s in
            .objects((s.node?.peers ?? []).map { peer -> [(key: String, value: StatsValue)] in
                [(key: "server", value: .text(peer.server)), (key: "weight", value: .integer(peer.weight)),
                 (key: "down", value: .flag(peer.down))]
            })
        },
        .figure("forwarded_items", StatsFamily.forwardedItems.sample()) { .integer($0.node?.forwardedItems ?? 0) },
        .figure("failed_forwards", StatsFamily.failedForwards.sample()) { .integer($0.node?.failedForwards ?? 0) },
        .figure("peer_list_mismatches", StatsFamily.peerListMismatches.sample()) { .integer($0.node?.peerListMismatches ?? 0) },
    ]
}

/// What the memory and the disk tier both count, for `ThumbService.cacheFigures`.
protocol CacheTierStatistics: Sendable {
    var entries: Int { get }
    var bytes: Int { get }
    var limitBytes: Int { get }
    var hits: Int { get }
    var misses: Int { get }
    var evictions: Int { get }
}

extension MemoryCache.Statistics: CacheTierStatistics {}
extension DiskCache.Statistics: CacheTierStatistics {}
