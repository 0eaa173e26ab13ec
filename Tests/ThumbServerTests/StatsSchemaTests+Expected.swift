/// What `StatsSchemaTests.fullSnapshot()` renders to, worked out from its figures: the `/stats`
/// JSON thumbd answered before the schema (byte for byte), and every `/metrics` series name,
/// type, help text and label as dashboards read them.
extension StatsSchemaTests {
    static let fullJSON = #"""
{"build":{"version":"1.2.3","commit":"0123456789ab","libvips":"8.14.1","ffmpeg":"5.1.6-0+deb12u1"},"uptime_seconds":12.3,"requests":{"total":7,"by_status":{"200":5,"404":1,"499":1}},"memory_cache":{"entries":3,"bytes":3000,"limit_bytes":1048576,"hits":11,"misses":12,"evictions":13},"disk_cache":{"entries":21,"bytes":22,"limit_bytes":23,"hits":24,"misses":25,"evictions":26,"write_errors":27,"corrupt":28,"directory_faults":29,"space_faults":30,"effective_limit_bytes":20,"fault":"the cache directory \"/var/cache/thumbd\" was removed"},"renders":{"total":31,"failed":2,"coalesced":33,"in_flight":2,"queued":5,"prefetch":34,"derived":35,"derive_fallbacks":39,"degraded":32,"refused":36,"known_failures":37,"abandoned":38,"flights":4,"latency_ms":{"p50":4.3,"p95":17.0,"p99":81.0}},"prefetch":{"jobs":41,"queued":42,"done":43,"skipped":44,"failed":45,"not_stored":46,"cancelled":47,"late":48,"catching_up":true,"refused":{"too_many_jobs":1,"too_many_items":0,"rate_limited":3}},"library":{"assets":100,"generation":9,"header_reads":101,"index_write_errors":56,"source_checks":53,"unreadable_files":2,"unreadable_directories":1,"undecodable_files":3,"watch":{"enabled":true,"instances":1,"active":true,"directories":50,"limit":8192,"over_limit":false,"events":51,"rewalks":52}},"placeholders":{"known":70,"unrenderable":5,"missing":25,"from_renders":60,"backfilled":20,"from_previews":15,"from_peers":16,"previews_mismatched":4,"preview_ms_mean":1.50,"backfill_failed":3,"write_errors":57,"shrink_ms_mean":0.08,"encode_ms_mean":0.04,"store_ms_mean":0.02,"backfill":{"enabled":true,"running":false,"passes":2,"renders":25,"seconds":10.0,"per_second":2.5,"ms_per_asset":2.0}},"connections":{"open":3,"total":40,"event_loop_wait_errors":55},"descriptors":{"limit":1024,"reserve":80,"max_connections":708,"max_open_disk_entries":0,"max_memory_files":236,"shortages":54},"video":{"decoders":2,"decoded":5,"failed":1,"crashes":1,"hangs":0,"killed":0,"helpers_started":2,"in_flight":1},"process":{"cpu_seconds":1.25,"resident_memory_bytes":52428800,"virtual_memory_bytes":1073741824,"open_fds":42,"max_fds":1024,"start_time_seconds":1764800000.37,"threads":17,"vips_memory_bytes":4096,"vips_memory_highwater_bytes":8388608},"node":{"name":"127.0.0.1:8082","peers":[{"server":"127.0.0.1:8081","weight":1,"down":true},{"server":"127.0.0.1:8082","weight":2,"down":false}],"forwarded_items":6,"failed_forwards":1,"peer_list_mismatches":0}}
"""#

    static let sparseJSON = #"""
{"build":{"version":"1.2.3","commit":"0123456789ab","libvips":"8.14.1","ffmpeg":"5.1.6-0+deb12u1"},"uptime_seconds":12.3,"requests":{"total":0,"by_status":{}},"memory_cache":{"entries":3,"bytes":3000,"limit_bytes":1048576,"hits":11,"misses":12,"evictions":13},"disk_cache":{"entries":21,"bytes":22,"limit_bytes":23,"hits":24,"misses":25,"evictions":26,"write_errors":27,"corrupt":28,"directory_faults":29,"space_faults":30,"effective_limit_bytes":20,"fault":null},"renders":{"total":31,"failed":2,"coalesced":33,"in_flight":2,"queued":5,"prefetch":34,"derived":35,"derive_fallbacks":39,"degraded":32,"refused":36,"known_failures":37,"abandoned":38,"flights":4,"latency_ms":{"p50":4.3,"p95":17.0,"p99":81.0}},"prefetch":{"jobs":41,"queued":42,"done":43,"skipped":44,"failed":45,"not_stored":46,"cancelled":47,"late":48,"catching_up":true,"refused":{"too_many_jobs":1,"too_many_items":0,"rate_limited":3}},"library":{"assets":100,"generation":9,"header_reads":101,"index_write_errors":56,"source_checks":53,"unreadable_files":2,"unreadable_directories":1,"undecodable_files":3,"watch":{"enabled":false,"instances":0,"active":false,"directories":0,"limit":null,"over_limit":false,"events":0,"rewalks":0}},"placeholders":{"known":70,"unrenderable":5,"missing":25,"from_renders":60,"backfilled":20,"from_previews":15,"from_peers":16,"previews_mismatched":4,"preview_ms_mean":1.50,"backfill_failed":3,"write_errors":57,"shrink_ms_mean":0.08,"encode_ms_mean":0.04,"store_ms_mean":0.02,"backfill":{"enabled":true,"running":false,"passes":2,"renders":25,"seconds":10.0,"per_second":2.5,"ms_per_asset":2.0}},"connections":{"open":3,"total":40,"event_loop_wait_errors":55},"descriptors":{"limit":null,"reserve":null,"max_connections":null,"max_open_disk_entries":null,"max_memory_files":null,"shortages":54},"video":{"decoders":0,"decoded":0,"failed":0,"crashes":0,"hangs":0,"killed":0,"helpers_started":0,"in_flight":0},"process":{"cpu_seconds":1.25,"resident_memory_bytes":52428800,"virtual_memory_bytes":1073741824,"open_fds":42,"max_fds":1024,"start_time_seconds":1764800000.37,"threads":17,"vips_memory_bytes":4096,"vips_memory_highwater_bytes":8388608},"node":null}
"""#

    static let fullMetrics = #"""
# HELP thumbd_build_info The version and git commit of thumbd, and the libvips and FFmpeg it runs with.
# TYPE thumbd_build_info gauge
thumbd_build_info{version="1.2.3",commit="0123456789ab",libvips="8.14.1",ffmpeg="5.1.6-0+deb12u1"} 1
# HELP thumbd_uptime_seconds Seconds since the server started.
# TYPE thumbd_uptime_seconds gauge
thumbd_uptime_seconds 12.345
# HELP thumbd_http_requests_total HTTP responses sent, by status.
# TYPE thumbd_http_requests_total counter
thumbd_http_requests_total{status="200"} 5
thumbd_http_requests_total{status="404"} 1
thumbd_http_requests_total{status="499"} 1
# HELP thumbd_http_request_duration_seconds Time from request to response written.
# TYPE thumbd_http_request_duration_seconds histogram
thumbd_http_request_duration_seconds_bucket{le="0.0005"} 1
thumbd_http_request_duration_seconds_bucket{le="0.001"} 2
thumbd_http_request_duration_seconds_bucket{le="0.0025"} 3
thumbd_http_request_duration_seconds_bucket{le="0.005"} 4
thumbd_http_request_duration_seconds_bucket{le="0.01"} 5
thumbd_http_request_duration_seconds_bucket{le="0.025"} 6
thumbd_http_request_duration_seconds_bucket{le="0.05"} 7
thumbd_http_request_duration_seconds_bucket{le="0.1"} 7
thumbd_http_request_duration_seconds_bucket{le="0.25"} 7
thumbd_http_request_duration_seconds_bucket{le="0.5"} 7
thumbd_http_request_duration_seconds_bucket{le="1.0"} 7
thumbd_http_request_duration_seconds_bucket{le="2.5"} 7
thumbd_http_request_duration_seconds_bucket{le="+Inf"} 7
thumbd_http_request_duration_seconds_sum 0.125
thumbd_http_request_duration_seconds_count 7
# HELP thumbd_cache_entries Cache entries by tier.
# TYPE thumbd_cache_entries gauge
thumbd_cache_entries{tier="memory"} 3
thumbd_cache_entries{tier="disk"} 21
# HELP thumbd_cache_bytes Cache size by tier, bytes.
# TYPE thumbd_cache_bytes gauge
thumbd_cache_bytes{tier="memory"} 3000
thumbd_cache_bytes{tier="disk"} 22
# HELP thumbd_cache_limit_bytes Cache limit by tier, bytes.
# TYPE thumbd_cache_limit_bytes gauge
thumbd_cache_limit_bytes{tier="memory"} 1048576
thumbd_cache_limit_bytes{tier="disk"} 23
# HELP thumbd_cache_hits_total Cache hits by tier.
# TYPE thumbd_cache_hits_total counter
thumbd_cache_hits_total{tier="memory"} 11
thumbd_cache_hits_total{tier="disk"} 24
# HELP thumbd_cache_misses_total Cache misses by tier.
# TYPE thumbd_cache_misses_total counter
thumbd_cache_misses_total{tier="memory"} 12
thumbd_cache_misses_total{tier="disk"} 25
# HELP thumbd_cache_evictions_total Cache evictions by tier.
# TYPE thumbd_cache_evictions_total counter
thumbd_cache_evictions_total{tier="memory"} 13
thumbd_cache_evictions_total{tier="disk"} 26
# HELP thumbd_disk_cache_write_errors_total Disk cache writes that failed.
# TYPE thumbd_disk_cache_write_errors_total counter
thumbd_disk_cache_write_errors_total 27
# HELP thumbd_disk_cache_corrupt_total Damaged disk cache entries found and deleted.
# TYPE thumbd_disk_cache_corrupt_total counter
thumbd_disk_cache_corrupt_total 28
# HELP thumbd_disk_cache_directory_faults_total Times the cache directory, entries/ or tmp/ were found removed or replaced while the server ran (each made again when allowed).
# TYPE thumbd_disk_cache_directory_faults_total counter
thumbd_disk_cache_directory_faults_total 29
# HELP thumbd_disk_cache_space_faults_total Times the disk cache's file system was found full (or its quota met) or read-only (each until probes find room or write access again).
# TYPE thumbd_disk_cache_space_faults_total counter
thumbd_disk_cache_space_faults_total 30
# HELP thumbd_disk_cache_effective_limit_bytes The disk cache's limit now, bytes: its configured limit, or lower while its file system is full.
# TYPE thumbd_disk_cache_effective_limit_bytes gauge
thumbd_disk_cache_effective_limit_bytes 20
# HELP thumbd_disk_cache_failing 1 while the disk cache cannot keep thumbnails as configured (its directory gone and not to be made again, its file system full or read-only), else 0.
# TYPE thumbd_disk_cache_failing gauge
thumbd_disk_cache_failing 1
# HELP thumbd_renders_total libvips renders run.
# TYPE thumbd_renders_total counter
thumbd_renders_total 31
# HELP thumbd_renders_failed_total libvips renders that failed.
# TYPE thumbd_renders_failed_total counter
thumbd_renders_failed_total 2
# HELP thumbd_renders_coalesced_total Requests that joined a lookup already in flight.
# TYPE thumbd_renders_coalesced_total counter
thumbd_renders_coalesced_total 33
# HELP thumbd_renders_in_flight Renders running now.
# TYPE thumbd_renders_in_flight gauge
thumbd_renders_in_flight 2
# HELP thumbd_renders_queued Renders waiting for a worker.
# TYPE thumbd_renders_queued gauge
thumbd_renders_queued 5
# HELP thumbd_renders_prefetch_total Renders run for prefetch jobs (of thumbd_renders_total).
# TYPE thumbd_renders_prefetch_total counter
thumbd_renders_prefetch_total 34
# HELP thumbd_renders_derived_total Renders made from a cached larger grid of the same photo, not from the source.
# TYPE thumbd_renders_derived_total counter
thumbd_renders_derived_total 35
# HELP thumbd_renders_derive_fallbacks_total Derived renders that failed and were made from the source instead.
# TYPE thumbd_renders_derive_fallbacks_total counter
thumbd_renders_derive_fallbacks_total 39
# HELP thumbd_renders_degraded_total Renders of a damaged JPEG (cut short) made of what decodes, the rest grey (of thumbd_renders_total).
# TYPE thumbd_renders_degraded_total counter
thumbd_renders_degraded_total 32
# HELP thumbd_renders_refused_total Client misses refused with 503: render queue full.
# TYPE thumbd_renders_refused_total counter
thumbd_renders_refused_total 36
# HELP thumbd_renders_known_failures_total Client misses answered with a failure remembered for their unchanged source (415/422): no render.
# TYPE thumbd_renders_known_failures_total counter
thumbd_renders_known_failures_total 37
# HELP thumbd_renders_abandoned_total Client renders dropped before they started: every client waiting for them had gone away.
# TYPE thumbd_renders_abandoned_total counter
thumbd_renders_abandoned_total 38
# HELP thumbd_renders_flights Keys with a lookup or render under way that clients or prefetch wait on.
# TYPE thumbd_renders_flights gauge
thumbd_renders_flights 4
# HELP thumbd_render_duration_seconds Successful render durations.
# TYPE thumbd_render_duration_seconds histogram
thumbd_render_duration_seconds_bucket{le="0.005"} 0
thumbd_render_duration_seconds_bucket{le="0.01"} 1
thumbd_render_duration_seconds_bucket{le="0.025"} 5
thumbd_render_duration_seconds_bucket{le="0.05"} 10
thumbd_render_duration_seconds_bucket{le="0.1"} 20
thumbd_render_duration_seconds_bucket{le="0.25"} 25
thumbd_render_duration_seconds_bucket{le="0.5"} 27
thumbd_render_duration_seconds_bucket{le="1.0"} 28
thumbd_render_duration_seconds_bucket{le="2.5"} 29
thumbd_render_duration_seconds_bucket{le="5.0"} 29
thumbd_render_duration_seconds_bucket{le="10.0"} 29
thumbd_render_duration_seconds_bucket{le="+Inf"} 29
thumbd_render_duration_seconds_sum 3.5
thumbd_render_duration_seconds_count 29
# HELP thumbd_prefetch_jobs_total Prefetch jobs started.
# TYPE thumbd_prefetch_jobs_total counter
thumbd_prefetch_jobs_total 41
# HELP thumbd_prefetch_queued Prefetch items waiting for a worker.
# TYPE thumbd_prefetch_queued gauge
thumbd_prefetch_queued 42
# HELP thumbd_prefetch_items_total Prefetch items by outcome.
# TYPE thumbd_prefetch_items_total counter
thumbd_prefetch_items_total{outcome="done"} 43
thumbd_prefetch_items_total{outcome="skipped"} 44
thumbd_prefetch_items_total{outcome="failed"} 45
thumbd_prefetch_items_total{outcome="not_stored"} 46
thumbd_prefetch_items_total{outcome="cancelled"} 47
# HELP thumbd_prefetch_late_total Client misses for items a prefetch job still had queued past their due time.
# TYPE thumbd_prefetch_late_total counter
thumbd_prefetch_late_total 48
# HELP thumbd_prefetch_catching_up 1 while prefetch runs before client misses to get ahead again.
# TYPE thumbd_prefetch_catching_up gauge
thumbd_prefetch_catching_up 1
# HELP thumbd_prefetch_refused_total Prefetch jobs refused by a per-client limit (429), by limit.
# TYPE thumbd_prefetch_refused_total counter
thumbd_prefetch_refused_total{outcome="too_many_jobs"} 1
thumbd_prefetch_refused_total{outcome="too_many_items"} 0
thumbd_prefetch_refused_total{outcome="rate_limited"} 3
# HELP thumbd_library_assets Images in the library listing.
# TYPE thumbd_library_assets gauge
thumbd_library_assets 100
# HELP thumbd_library_header_reads_total Image headers read by the library index.
# TYPE thumbd_library_header_reads_total counter
thumbd_library_header_reads_total 101
# HELP thumbd_index_write_errors_total Writes of the listing to index.sqlite that failed (the listing in memory stays right).
# TYPE thumbd_index_write_errors_total counter
thumbd_index_write_errors_total 56
# HELP thumbd_library_source_checks_total Checks of a recently resolved URL: a stat, or a full resolve after a reported change (the rest were trusted on the library watch).
# TYPE thumbd_library_source_checks_total counter
thumbd_library_source_checks_total 53
# HELP thumbd_library_unreadable Files and directories the library index's last scan could not read (kept as listed, tried again).
# TYPE thumbd_library_unreadable gauge
thumbd_library_unreadable{kind="file"} 2
thumbd_library_unreadable{kind="directory"} 1
# HELP thumbd_library_undecodable_files Files in a format thumbd reads left out of the listing because their header does not decode here (a lossless JPEG).
# TYPE thumbd_library_undecodable_files gauge
thumbd_library_undecodable_files 3
# HELP thumbd_library_watch_instances inotify instances watching the library (0: library_watch off).
# TYPE thumbd_library_watch_instances gauge
thumbd_library_watch_instances 1
# HELP thumbd_library_watch_active 1 when inotify watches the whole library, else 0.
# TYPE thumbd_library_watch_active gauge
thumbd_library_watch_active 1
# HELP thumbd_library_watch_directories Library directories watched.
# TYPE thumbd_library_watch_directories gauge
thumbd_library_watch_directories 50
# HELP thumbd_library_watch_over_limit 1 when the library has more directories than its share of fs.inotify.max_user_watches allows (nothing watched), else 0.
# TYPE thumbd_library_watch_over_limit gauge
thumbd_library_watch_over_limit 0
# HELP thumbd_library_watch_events_total inotify events read.
# TYPE thumbd_library_watch_events_total counter
thumbd_library_watch_events_total 51
# HELP thumbd_library_watch_rewalks_total Walks of the whole library after the first (an overflow, a tree moved in, the root replaced).
# TYPE thumbd_library_watch_rewalks_total counter
thumbd_library_watch_rewalks_total 52
# HELP thumbd_placeholders Listed images by placeholder (thumbhash) state.
# TYPE thumbd_placeholders gauge
thumbd_placeholders{state="known"} 70
thumbd_placeholders{state="unrenderable"} 5
thumbd_placeholders{state="missing"} 25
# HELP thumbd_placeholders_made_total Placeholders made, beside a render, by the backfill or from an embedded preview.
# TYPE thumbd_placeholders_made_total counter
thumbd_placeholders_made_total{by="render"} 60
thumbd_placeholders_made_total{by="backfill"} 20
thumbd_placeholders_made_total{by="preview"} 15
# HELP thumbd_placeholders_from_peers_total Placeholders other nodes of the cluster made, taken into this node's index.
# TYPE thumbd_placeholders_from_peers_total counter
thumbd_placeholders_from_peers_total 16
# HELP thumbd_placeholder_backfill_failed_total Backfill renders that made no placeholder.
# TYPE thumbd_placeholder_backfill_failed_total counter
thumbd_placeholder_backfill_failed_total 3
# HELP thumbd_placeholder_write_errors_total Writes of placeholders to index.sqlite that failed (those in memory stay right).
# TYPE thumbd_placeholder_write_errors_total counter
thumbd_placeholder_write_errors_total 57
# HELP thumbd_placeholder_seconds_total Time spent on placeholders: shrinking renders' pixels, hashing, storing, reading embedded previews, and the backfill's renders.
# TYPE thumbd_placeholder_seconds_total counter
thumbd_placeholder_seconds_total{step="shrink"} 0.008
thumbd_placeholder_seconds_total{step="encode"} 0.004
thumbd_placeholder_seconds_total{step="store"} 0.0016
thumbd_placeholder_seconds_total{step="preview_read"} 0.03
thumbd_placeholder_seconds_total{step="backfill_render"} 0.05
# HELP thumbd_placeholder_backfill_running 1 while a backfill pass is under way.
# TYPE thumbd_placeholder_backfill_running gauge
thumbd_placeholder_backfill_running 0
# HELP thumbd_placeholder_backfill_renders_total Backfill renders run (failed ones included).
# TYPE thumbd_placeholder_backfill_renders_total counter
thumbd_placeholder_backfill_renders_total 25
# HELP thumbd_placeholder_backfill_seconds_total Wall-clock seconds backfill passes have run, yielding included.
# TYPE thumbd_placeholder_backfill_seconds_total counter
thumbd_placeholder_backfill_seconds_total 10.0
# HELP thumbd_connections_open Open client connections.
# TYPE thumbd_connections_open gauge
thumbd_connections_open 3
# HELP thumbd_connections_total Connections accepted.
# TYPE thumbd_connections_total counter
thumbd_connections_total 40
# HELP thumbd_event_loop_wait_errors_total epoll_wait calls of the HTTP event loops that failed (each followed by a 10 ms pause).
# TYPE thumbd_event_loop_wait_errors_total counter
thumbd_event_loop_wait_errors_total 55
# HELP thumbd_descriptor_budget How the open-file limit is shared out at start: the limit, the reserve, and the most connections, kept-open disk entries and memfds.
# TYPE thumbd_descriptor_budget gauge
thumbd_descriptor_budget{part="limit"} 1024
thumbd_descriptor_budget{part="reserve"} 80
thumbd_descriptor_budget{part="connections"} 708
thumbd_descriptor_budget{part="open_disk_entries"} 0
thumbd_descriptor_budget{part="memory_files"} 236
# HELP thumbd_descriptor_shortages_total Requests answered 503 out_of_descriptors: no file descriptor was free (EMFILE, ENFILE).
# TYPE thumbd_descriptor_shortages_total counter
thumbd_descriptor_shortages_total 54
# HELP thumbd_video_decodes_total Video poster decodes in the helper processes, by outcome.
# TYPE thumbd_video_decodes_total counter
thumbd_video_decodes_total{outcome="decoded"} 5
thumbd_video_decodes_total{outcome="failed"} 1
# HELP thumbd_video_helper_faults_total Video helpers that died during a decode (crash), were killed for giving no answer in time (hang), or were killed from outside (killed: SIGKILL, e.g. out of memory).
# TYPE thumbd_video_helper_faults_total counter
thumbd_video_helper_faults_total{kind="crash"} 1
thumbd_video_helper_faults_total{kind="hang"} 0
thumbd_video_helper_faults_total{kind="killed"} 0
# HELP thumbd_video_helpers_started_total Video helper processes started.
# TYPE thumbd_video_helpers_started_total counter
thumbd_video_helpers_started_total 2
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 1.25
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 52428800
# HELP process_virtual_memory_bytes Virtual memory size in bytes.
# TYPE process_virtual_memory_bytes gauge
process_virtual_memory_bytes 1073741824
# HELP process_open_fds Number of open file descriptors.
# TYPE process_open_fds gauge
process_open_fds 42
# HELP process_max_fds Maximum number of open file descriptors.
# TYPE process_max_fds gauge
process_max_fds 1024
# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1764800000.37
# HELP thumbd_threads Threads of the thumbd process (num_threads in /proc/self/stat).
# TYPE thumbd_threads gauge
thumbd_threads 17
# HELP thumbd_vips_memory_bytes Bytes libvips holds through its tracked allocator now (vips_tracked_get_mem).
# TYPE thumbd_vips_memory_bytes gauge
thumbd_vips_memory_bytes 4096
# HELP thumbd_vips_memory_highwater_bytes The most bytes libvips' tracked allocator has held at once since the server started (vips_tracked_get_mem_highwater).
# TYPE thumbd_vips_memory_highwater_bytes gauge
thumbd_vips_memory_highwater_bytes 8388608
# HELP thumbd_node_info This node's address in the cluster's upstream (peers), for summing the cluster.
# TYPE thumbd_node_info gauge
thumbd_node_info{node="127.0.0.1:8082"} 1
# HELP thumbd_prefetch_forwarded_items_total Prefetch items forwarded to the node that owns them.
# TYPE thumbd_prefetch_forwarded_items_total counter
thumbd_prefetch_forwarded_items_total 6
# HELP thumbd_prefetch_failed_forwards_total Prefetch forwards a peer did not answer (it was then marked down).
# TYPE thumbd_prefetch_failed_forwards_total counter
thumbd_prefetch_failed_forwards_total 1
# HELP thumbd_peer_list_mismatches_total Calls from nodes given other peers than this one (they disagree on owners).
# TYPE thumbd_peer_list_mismatches_total counter
thumbd_peer_list_mismatches_total 0
"""#
}
