import Foundation
import Testing
@testable import Library
@testable import Rendering
@testable import Thumbnails
@testable import ThumbServer

/// The hand-written `/stats` and `/metrics` before `statsSchema` (issue 27), word for word but
/// for reading a given snapshot: kept only to show the schema renders the same.
enum LegacyStats {
    static func statsJSON(_ s: ThumbService.StatsSnapshot) -> String {
        let byStatus = s.requests.byStatus.keys.sorted().map { "\"\($0)\":\(s.requests.byStatus[$0]!)" }
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        let watchLimit = s.watch.flatMap { $0.limit == Int.max ? nil : String($0.limit) } ?? "null"
        func budget(_ part: KeyPath<DescriptorBudget, Int>) -> String { s.descriptors.map { String($0[keyPath: part]) } ?? "null" }
        let p = s.placeholders, b = s.backfill, made = max(1, p.fromRenders + p.backfilled)
        return """
        {"uptime_seconds":\(String(format: "%.1f", s.uptime)),\
        "requests":{"total":\(s.requests.total),"by_status":{\(byStatus.joined(separator: ","))}},\
        "memory_cache":{"entries":\(s.memory.entries),"bytes":\(s.memory.bytes),"limit_bytes":\(s.memory.limitBytes),\
        "hits":\(s.memory.hits),"misses":\(s.memory.misses),"evictions":\(s.memory.evictions)},\
        "disk_cache":{"entries":\(s.disk.entries),"bytes":\(s.disk.bytes),"limit_bytes":\(s.disk.limitBytes),\
        "hits":\(s.disk.hits),"misses":\(s.disk.misses),"evictions":\(s.disk.evictions),\
        "write_errors":\(s.disk.writeErrors),"corrupt":\(s.disk.corrupt),"directory_faults":\(s.disk.directoryFaults),\
        "fault":\(s.disk.fault.map(JSON.quote) ?? "null")},\
        "renders":{"total":\(s.renders.total),"failed":\(s.renders.failed),"coalesced":\(s.renders.coalesced),\
        "in_flight":\(s.inFlight),"queued":\(s.queued),"prefetch":\(s.renders.prefetch),"derived":\(s.renders.derived),"refused":\(s.renders.refused),"known_failures":\(s.renders.knownFailures),\
        "abandoned":\(s.renders.abandoned),"flights":\(s.flights),\
        "latency_ms":{"p50":\(ms(s.renders.p50Milliseconds)),"p95":\(ms(s.renders.p95Milliseconds)),"p99":\(ms(s.renders.p99Milliseconds))}},\
        "prefetch":{"jobs":\(s.prefetch.jobs),"queued":\(s.prefetch.queued),"done":\(s.prefetch.done),\
        "skipped":\(s.prefetch.skipped),"failed":\(s.prefetch.failed),"not_stored":\(s.prefetch.notStored),"cancelled":\(s.prefetch.cancelled),\
        "late":\(s.prefetch.late),"catching_up":\(s.prefetch.catchingUp),"refused":{\(ThumbService.refusalOutcomes.map { "\"\($0)\":\(s.prefetch.refused[$0] ?? 0)" }.joined(separator: ","))}},\
        "library":{"assets":\(s.libraryAssets),"generation":\(s.libraryGeneration),"header_reads":\(s.headerReads),"source_checks":\(s.sourceChecks),\
        "unreadable_files":\(s.unreadable.files),"unreadable_directories":\(s.unreadable.directories),\
        "watch":{"enabled":\(s.watch != nil),"instances":\(s.watchInstances),"active":\(s.watch?.active ?? false),"directories":\(s.watch?.directories ?? 0),\
        "limit":\(watchLimit),"over_limit":\(s.watch?.overLimit ?? false),\
        "events":\(s.watch?.events ?? 0),"rewalks":\(s.watch?.rewalks ?? 0)}},\
        "placeholders":{"known":\(s.thumbhashes.known),"unrenderable":\(s.thumbhashes.unrenderable),\
        "missing":\(max(0, s.libraryAssets - s.thumbhashes.known - s.thumbhashes.unrenderable)),\
        "from_renders":\(p.fromRenders),"backfilled":\(p.backfilled),"backfill_failed":\(p.backfillFailed),\
        "shrink_ms_mean":\(String(format: "%.2f", Double(p.shrinkMicroseconds) / 1000 / Double(made))),\
        "encode_ms_mean":\(String(format: "%.2f", Double(p.encodeMicroseconds) / 1000 / Double(made))),\
        "store_ms_mean":\(String(format: "%.2f", Double(p.storeMicroseconds) / 1000 / Double(made))),\
        "backfill":{"enabled":\(b.enabled),"running":\(b.running),"passes":\(b.passes),"renders":\(b.renders),\
        "seconds":\(String(format: "%.1f", b.seconds)),"per_second":\(String(format: "%.1f", b.seconds > 0 ? Double(b.renders) / b.seconds : 0)),\
        "ms_per_asset":\(ms(Double(p.backfillRenderMicroseconds) / 1000 / Double(max(1, b.renders))))}},\
        "connections":{"open":\(s.connections.open),"total":\(s.connections.total)},\
        "descriptors":{"limit":\(budget(\.limit)),"reserve":\(budget(\.reserve)),"max_connections":\(budget(\.connections)),\
        "max_open_disk_entries":\(budget(\.openDiskEntries)),"max_memory_files":\(budget(\.memoryFiles)),\
        "shortages":\(s.descriptorShortages)},\
        "video":{"decoders":\(s.video?.decoders ?? 0),"decoded":\(s.video?.statistics.decoded ?? 0),"failed":\(s.video?.statistics.failed ?? 0),\
        "crashes":\(s.video?.statistics.crashes ?? 0),"hangs":\(s.video?.statistics.hangs ?? 0),"killed":\(s.video?.statistics.killed ?? 0),\
        "helpers_started":\(s.video?.statistics.helpersStarted ?? 0),"in_flight":\(s.video?.statistics.inFlight ?? 0)},\
        "node":\(nodeJSON(s))}

        """
    }

    /// `/stats`' `"node"`: this node's address, the upstream's servers with their weights and
    /// whether this node has them marked down, and the prefetch items forwarded to their owners
    /// and forwards that failed; `null` for a single node.
    static func nodeJSON(_ snapshot: ThumbService.StatsSnapshot) -> String {
        guard let s = snapshot.node else { return "null" }
        let peers = s.peers.map { peer in
            "{\"server\":\(JSON.quote(peer.server)),\"weight\":\(peer.weight),\"down\":\(peer.down)}"
        }
        return "{\"name\":\(JSON.quote(s.name)),\"peers\":[\(peers.joined(separator: ","))],"
            + "\"forwarded_items\":\(s.forwardedItems),\"failed_forwards\":\(s.failedForwards),"
            + "\"peer_list_mismatches\":\(s.peerListMismatches)}"
    }

    static func metricsText(_ s: ThumbService.StatsSnapshot) -> String {
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func histogram(_ name: String, _ help: String, bounds: [Double], buckets: [Int], sum: Double, count: Int) {
            var samples = zip(bounds, buckets).map { (labels: "_bucket{le=\"\($0)\"}", value: "\($1)") }
            samples.append((labels: "_bucket{le=\"+Inf\"}", value: "\(count)"))
            samples.append((labels: "_sum", value: "\(sum)"))
            samples.append((labels: "_count", value: "\(count)"))
            out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
            for sample in samples { out += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        metric("thumbd_uptime_seconds", "gauge", "Seconds since the server started.", [("", "\(s.uptime)")])
        metric("thumbd_http_requests_total", "counter", "HTTP responses sent, by status.",
               s.requests.byStatus.keys.sorted().map { ("{status=\"\($0)\"}", "\(s.requests.byStatus[$0]!)") })
        histogram("thumbd_http_request_duration_seconds", "Time from request to response written.",
                  bounds: RequestStatistics.bucketBounds, buckets: s.requests.durationBuckets,
                  sum: s.requests.durationSumSeconds, count: s.requests.total)
        if let cluster = s.node {
            let name = cluster.name.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "\"", with: "\\\"")
            metric("thumbd_node_info", "gauge", "This node's address in the cluster's upstream (peers), for summing the cluster.",
                   [("{node=\"\(name)\"}", "1")])
            if let stats = s.node {
                metric("thumbd_prefetch_forwarded_items_total", "counter", "Prefetch items forwarded to the node that owns them.",
                       [("", "\(stats.forwardedItems)")])
                metric("thumbd_prefetch_failed_forwards_total", "counter",
                       "Prefetch forwards a peer did not answer (it was then marked down).", [("", "\(stats.failedForwards)")])
                metric("thumbd_peer_list_mismatches_total", "counter",
                       "Calls from nodes given other peers than this one (they disagree on owners).",
                       [("", "\(stats.peerListMismatches)")])
            }
        }
        let m = s.memory, d = s.disk
        func tiers(_ memory: Int, _ disk: Int) -> [(labels: String, value: String)] {
            [("{tier=\"memory\"}", "\(memory)"), ("{tier=\"disk\"}", "\(disk)")]
        }
        metric("thumbd_cache_hits_total", "counter", "Cache hits by tier.", tiers(m.hits, d.hits))
        metric("thumbd_cache_misses_total", "counter", "Cache misses by tier.", tiers(m.misses, d.misses))
        metric("thumbd_cache_evictions_total", "counter", "Cache evictions by tier.", tiers(m.evictions, d.evictions))
        metric("thumbd_cache_entries", "gauge", "Cache entries by tier.", tiers(m.entries, d.entries))
        metric("thumbd_cache_bytes", "gauge", "Cache size by tier, bytes.", tiers(m.bytes, d.bytes))
        metric("thumbd_cache_limit_bytes", "gauge", "Cache limit by tier, bytes.", tiers(m.limitBytes, d.limitBytes))
        metric("thumbd_disk_cache_write_errors_total", "counter", "Disk cache writes that failed.", [("", "\(s.disk.writeErrors)")])
        metric("thumbd_disk_cache_corrupt_total", "counter", "Damaged disk cache entries found and deleted.",
               [("", "\(s.disk.corrupt)")])
        metric("thumbd_disk_cache_directory_faults_total", "counter",
               "Times the cache directory, entries/ or tmp/ were found removed or replaced while the server ran (each made again when allowed).",
               [("", "\(s.disk.directoryFaults)")])
        metric("thumbd_disk_cache_failing", "gauge",
               "1 while the disk cache cannot keep thumbnails (its directory gone and not to be made again), else 0.",
               [("", s.disk.fault == nil ? "0" : "1")])
        metric("thumbd_renders_total", "counter", "libvips renders run.", [("", "\(s.renders.total)")])
        metric("thumbd_renders_failed_total", "counter", "libvips renders that failed.", [("", "\(s.renders.failed)")])
        metric("thumbd_renders_prefetch_total", "counter", "Renders run for prefetch jobs (of thumbd_renders_total).",
               [("", "\(s.renders.prefetch)")])
        metric("thumbd_renders_coalesced_total", "counter", "Requests that joined a lookup already in flight.",
               [("", "\(s.renders.coalesced)")])
        metric("thumbd_renders_derived_total", "counter",
               "Renders made from a cached larger grid of the same photo, not from the source.",
               [("", "\(s.renders.derived)")])
        metric("thumbd_renders_refused_total", "counter", "Client misses refused with 503: render queue full.",
               [("", "\(s.renders.refused)")])
        metric("thumbd_renders_known_failures_total", "counter",
               "Client misses answered with a failure remembered for their unchanged source (415/422): no render.",
               [("", "\(s.renders.knownFailures)")])
        metric("thumbd_renders_abandoned_total", "counter",
               "Client renders dropped before they started: every client waiting for them had gone away.",
               [("", "\(s.renders.abandoned)")])
        metric("thumbd_renders_in_flight", "gauge", "Renders running now.", [("", "\(s.inFlight)")])
        metric("thumbd_renders_queued", "gauge", "Renders waiting for a worker.", [("", "\(s.queued)")])
        metric("thumbd_renders_flights", "gauge", "Keys with a lookup or render under way that clients or prefetch wait on.",
               [("", "\(s.flights)")])
        histogram("thumbd_render_duration_seconds", "Successful render durations.",
                  bounds: RenderStatistics.bucketBounds, buckets: s.renders.durationBuckets,
                  sum: s.renders.durationSumSeconds, count: s.renders.total - s.renders.failed)
        metric("thumbd_prefetch_jobs_total", "counter", "Prefetch jobs started.", [("", "\(s.prefetch.jobs)")])
        metric("thumbd_prefetch_queued", "gauge", "Prefetch items waiting for a worker.", [("", "\(s.prefetch.queued)")])
        metric("thumbd_prefetch_items_total", "counter", "Prefetch items by outcome.",
               [("{outcome=\"done\"}", "\(s.prefetch.done)"), ("{outcome=\"skipped\"}", "\(s.prefetch.skipped)"),
                ("{outcome=\"failed\"}", "\(s.prefetch.failed)"), ("{outcome=\"not_stored\"}", "\(s.prefetch.notStored)"),
                ("{outcome=\"cancelled\"}", "\(s.prefetch.cancelled)")])
        metric("thumbd_prefetch_refused_total", "counter", "Prefetch jobs refused by a per-client limit (429), by limit.",
               ThumbService.refusalOutcomes.map { ("{outcome=\"\($0)\"}", "\(s.prefetch.refused[$0] ?? 0)") })
        metric("thumbd_prefetch_late_total", "counter",
               "Client misses for items a prefetch job still had queued past their due time.", [("", "\(s.prefetch.late)")])
        metric("thumbd_prefetch_catching_up", "gauge", "1 while prefetch runs before client misses to get ahead again.",
               [("", s.prefetch.catchingUp ? "1" : "0")])
        metric("thumbd_library_assets", "gauge", "Images in the library listing.", [("", "\(s.libraryAssets)")])
        metric("thumbd_library_header_reads_total", "counter", "Image headers read by the library index.",
               [("", "\(s.headerReads)")])
        metric("thumbd_library_unreadable", "gauge",
               "Files and directories the library index's last scan could not read (kept as listed, tried again).",
               [("{kind=\"file\"}", "\(s.unreadable.files)"), ("{kind=\"directory\"}", "\(s.unreadable.directories)")])
        metric("thumbd_library_source_checks_total", "counter",
               "Checks of a recently resolved URL: a stat, or a full resolve after a reported change (the rest were trusted on the library watch).",
               [("", "\(s.sourceChecks)")])
        metric("thumbd_library_watch_active", "gauge", "1 when inotify watches the whole library, else 0.",
               [("", s.watch?.active == true ? "1" : "0")])
        metric("thumbd_library_watch_directories", "gauge", "Library directories watched.",
               [("", "\(s.watch?.directories ?? 0)")])
        metric("thumbd_library_watch_events_total", "counter", "inotify events read.", [("", "\(s.watch?.events ?? 0)")])
        metric("thumbd_library_watch_rewalks_total", "counter",
               "Walks of the whole library after the first (an overflow, a tree moved in, the root replaced).",
               [("", "\(s.watch?.rewalks ?? 0)")])
        metric("thumbd_library_watch_over_limit", "gauge",
               "1 when the library has more directories than its share of fs.inotify.max_user_watches allows (nothing watched), else 0.",
               [("", s.watch?.overLimit == true ? "1" : "0")])
        metric("thumbd_library_watch_instances", "gauge", "inotify instances watching the library (0: library_watch off).",
               [("", "\(s.watchInstances)")])
        metric("thumbd_placeholders", "gauge", "Listed images by placeholder (thumbhash) state.",
               [("{state=\"known\"}", "\(s.thumbhashes.known)"), ("{state=\"unrenderable\"}", "\(s.thumbhashes.unrenderable)"),
                ("{state=\"missing\"}", "\(max(0, s.libraryAssets - s.thumbhashes.known - s.thumbhashes.unrenderable))")])
        metric("thumbd_placeholders_made_total", "counter", "Placeholders made, beside a render or by the backfill.",
               [("{by=\"render\"}", "\(s.placeholders.fromRenders)"), ("{by=\"backfill\"}", "\(s.placeholders.backfilled)")])
        metric("thumbd_placeholder_seconds_total", "counter",
               "Time spent on placeholders: shrinking renders' pixels, hashing, storing, and the backfill's renders.",
               [("{step=\"shrink\"}", "\(Double(s.placeholders.shrinkMicroseconds) / 1e6)"),
                ("{step=\"encode\"}", "\(Double(s.placeholders.encodeMicroseconds) / 1e6)"),
                ("{step=\"store\"}", "\(Double(s.placeholders.storeMicroseconds) / 1e6)"),
                ("{step=\"backfill_render\"}", "\(Double(s.placeholders.backfillRenderMicroseconds) / 1e6)")])
        metric("thumbd_placeholder_backfill_renders_total", "counter", "Backfill renders run (failed ones included).",
               [("", "\(s.backfill.renders)")])
        metric("thumbd_placeholder_backfill_failed_total", "counter", "Backfill renders that made no placeholder.",
               [("", "\(s.placeholders.backfillFailed)")])
        metric("thumbd_placeholder_backfill_seconds_total", "counter", "Wall-clock seconds backfill passes have run, yielding included.",
               [("", "\(s.backfill.seconds)")])
        metric("thumbd_placeholder_backfill_running", "gauge", "1 while a backfill pass is under way.",
               [("", s.backfill.running ? "1" : "0")])
        metric("thumbd_connections_open", "gauge", "Open client connections.", [("", "\(s.connections.open)")])
        metric("thumbd_connections_total", "counter", "Connections accepted.", [("", "\(s.connections.total)")])
        if let d = s.descriptors {
            metric("thumbd_descriptor_budget", "gauge",
                   "How the open-file limit is shared out at start: the limit, the reserve, and the most connections, kept-open disk entries and memfds.",
                   [("{part=\"limit\"}", "\(d.limit)"), ("{part=\"reserve\"}", "\(d.reserve)"),
                    ("{part=\"connections\"}", "\(d.connections)"), ("{part=\"open_disk_entries\"}", "\(d.openDiskEntries)"),
                    ("{part=\"memory_files\"}", "\(d.memoryFiles)")])
        }
        metric("thumbd_descriptor_shortages_total", "counter",
               "Requests answered 503 out_of_descriptors: no file descriptor was free (EMFILE, ENFILE).",
               [("", "\(s.descriptorShortages)")])
        let video = s.video?.statistics ?? VideoPosters.Statistics()
        metric("thumbd_video_decodes_total", "counter", "Video poster decodes in the helper processes, by outcome.",
               [("{outcome=\"decoded\"}", "\(video.decoded)"), ("{outcome=\"failed\"}", "\(video.failed)")])
        metric("thumbd_video_helper_faults_total", "counter",
               "Video helpers that died during a decode (crash), were killed for giving no answer in time (hang), or were killed from outside (killed: SIGKILL, e.g. out of memory).",
               [("{kind=\"crash\"}", "\(video.crashes)"), ("{kind=\"hang\"}", "\(video.hangs)"), ("{kind=\"killed\"}", "\(video.killed)")])
        metric("thumbd_video_helpers_started_total", "counter", "Video helper processes started.", [("", "\(video.helpersStarted)")])
        return out
    }

    /// The outcomes of a job refused by a per-client limit (`PrefetchRefusal.outcome`), in the
    /// order `/stats` and `/metrics` list them: a fixed set, whatever the clients (bounded cardinality).
    static let refusalOutcomes = ["too_many_jobs", "too_many_items", "rate_limited"]

}
