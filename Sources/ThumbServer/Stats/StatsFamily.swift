/// thumbd's Prometheus families: name, kind and `# HELP`, each declared once. Their names, kinds,
/// help texts and labels are a contract (dashboards and alerts read them): rename none.
/// `ThumbService.statsSchema` says which figure each sample is.
enum StatsFamily {
    static let buildInfo = MetricFamily("thumbd_build_info", .info,
                                        "The version and git commit of thumbd, and the libvips and FFmpeg it runs with.")
    static let uptime = MetricFamily("thumbd_uptime_seconds", .gauge, "Seconds since the server started.")
    static let requests = MetricFamily("thumbd_http_requests_total", .counter, "HTTP responses sent, by status.")
    static let requestDuration = MetricFamily("thumbd_http_request_duration_seconds", .histogram,
                                              "Time from request to response written.")

    static let nodeInfo = MetricFamily("thumbd_node_info", .info,
                                       "This node's address in the cluster's upstream (peers), for summing the cluster.")
    static let forwardedItems = MetricFamily("thumbd_prefetch_forwarded_items_total", .counter,
                                             "Prefetch items forwarded to the node that owns them.")
    static let failedForwards = MetricFamily("thumbd_prefetch_failed_forwards_total", .counter,
                                             "Prefetch forwards a peer did not answer (it was then marked down).")
    static let peerListMismatches = MetricFamily("thumbd_peer_list_mismatches_total", .counter,
                                                 "Calls from nodes given other peers than this one (they disagree on owners).")

    static let cacheHits = MetricFamily("thumbd_cache_hits_total", .counter, "Cache hits by tier.")
    static let cacheMisses = MetricFamily("thumbd_cache_misses_total", .counter, "Cache misses by tier.")
    static let cacheEvictions = MetricFamily("thumbd_cache_evictions_total", .counter, "Cache evictions by tier.")
    static let cacheEntries = MetricFamily("thumbd_cache_entries", .gauge, "Cache entries by tier.")
    static let cacheBytes = MetricFamily("thumbd_cache_bytes", .gauge, "Cache size by tier, bytes.")
    static let cacheLimit = MetricFamily("thumbd_cache_limit_bytes", .gauge, "Cache limit by tier, bytes.")
    static let diskWriteErrors = MetricFamily("thumbd_disk_cache_write_errors_total", .counter, "Disk cache writes that failed.")
    static let diskCorrupt = MetricFamily("thumbd_disk_cache_corrupt_total", .counter, "Damaged disk cache entries found and deleted.")
    static let diskDirectoryFaults = MetricFamily(
        "thumbd_disk_cache_directory_faults_total", .counter,
        "Times the cache directory, entries/ or tmp/ were found removed or replaced while the server ran (each made again when allowed).")
    static let diskSpaceFaults = MetricFamily(
        "thumbd_disk_cache_space_faults_total", .counter,
        "Times the disk cache's file system was found full (or its quota met) or read-only (each until probes find room or write access again).")
    static let diskEffectiveLimit = MetricFamily(
        "thumbd_disk_cache_effective_limit_bytes", .gauge,
        "The disk cache's limit now, bytes: its configured limit, or lower while its file system is full.")
    static let diskFailing = MetricFamily(
        "thumbd_disk_cache_failing", .gauge,
        "1 while the disk cache cannot keep thumbnails as configured (its directory gone and not to be made again, its file system full or read-only), else 0.")

    static let renders = MetricFamily("thumbd_renders_total", .counter, "libvips renders run.")
    static let rendersFailed = MetricFamily("thumbd_renders_failed_total", .counter, "libvips renders that failed.")
    static let rendersPrefetch = MetricFamily("thumbd_renders_prefetch_total", .counter,
                                              "Renders run for prefetch jobs (of thumbd_renders_total).")
    static let rendersCoalesced = MetricFamily("thumbd_renders_coalesced_total", .counter,
                                               "Requests that joined a lookup already in flight.")
    static let rendersDeriveFallbacks = MetricFamily("thumbd_renders_derive_fallbacks_total", .counter,
                                                     "Derived renders that failed and were made from the source instead.")
    static let rendersDegraded = MetricFamily(
        "thumbd_renders_degraded_total", .counter,
        "Renders of a damaged JPEG (cut short) made of what decodes, the rest grey (of thumbd_renders_total).")
    static let rendersDerived = MetricFamily("thumbd_renders_derived_total", .counter,
                                             "Renders made from a cached larger grid of the same photo, not from the source.")
    static let rendersRefused = MetricFamily("thumbd_renders_refused_total", .counter,
                                             "Client misses refused with 503: render queue full.")
    static let rendersKnownFailures = MetricFamily(
        "thumbd_renders_known_failures_total", .counter,
        "Client misses answered with a failure remembered for their unchanged source (415/422): no render.")
    static let rendersAbandoned = MetricFamily(
        "thumbd_renders_abandoned_total", .counter,
        "Client renders dropped before they started: every client waiting for them had gone away.")
    static let rendersInFlight = MetricFamily("thumbd_renders_in_flight", .gauge, "Renders running now.")
    static let rendersQueued = MetricFamily("thumbd_renders_queued", .gauge, "Renders waiting for a worker.")
    static let rendersFlights = MetricFamily("thumbd_renders_flights", .gauge,
                                             "Keys with a lookup or render under way that clients or prefetch wait on.")
    static let renderDuration = MetricFamily("thumbd_render_duration_seconds", .histogram, "Successful render durations.")

    static let prefetchJobs = MetricFamily("thumbd_prefetch_jobs_total", .counter, "Prefetch jobs started.")
    static let prefetchQueued = MetricFamily("thumbd_prefetch_queued", .gauge, "Prefetch items waiting for a worker.")
    static let prefetchItems = MetricFamily("thumbd_prefetch_items_total", .counter, "Prefetch items by outcome.")
    static let prefetchRefused = MetricFamily("thumbd_prefetch_refused_total", .counter,
                                              "Prefetch jobs refused by a per-client limit (429), by limit.")
    static let prefetchLate = MetricFamily("thumbd_prefetch_late_total", .counter,
                                           "Client misses for items a prefetch job still had queued past their due time.")
    static let prefetchCatchingUp = MetricFamily("thumbd_prefetch_catching_up", .gauge,
                                                 "1 while prefetch runs before client misses to get ahead again.")

    static let libraryAssets = MetricFamily("thumbd_library_assets", .gauge, "Images in the library listing.")
    static let libraryHeaderReads = MetricFamily("thumbd_library_header_reads_total", .counter,
                                                 "Image headers read by the library index.")
    static let libraryUnreadable = MetricFamily(
        "thumbd_library_unreadable", .gauge,
        "Files and directories the library index's last scan could not read (kept as listed, tried again).")
    static let libraryUndecodable = MetricFamily(
        "thumbd_library_undecodable_files", .gauge,
        "Files in a format thumbd reads left out of the listing because their header does not decode here (a lossless JPEG).")
    static let librarySourceChecks = MetricFamily(
        "thumbd_library_source_checks_total", .counter,
        "Checks of a recently resolved URL: a stat, or a full resolve after a reported change (the rest were trusted on the library watch).")
    static let watchActive = MetricFamily("thumbd_library_watch_active", .gauge, "1 when inotify watches the whole library, else 0.")
    static let watchDirectories = MetricFamily("thumbd_library_watch_directories", .gauge, "Library directories watched.")
    static let watchEvents = MetricFamily("thumbd_library_watch_events_total", .counter, "inotify events read.")
    static let watchRewalks = MetricFamily(
        "thumbd_library_watch_rewalks_total", .counter,
        "Walks of the whole library after the first (an overflow, a tree moved in, the root replaced).")
    static let watchOverLimit = MetricFamily(
        "thumbd_library_watch_over_limit", .gauge,
        "1 when the library has more directories than its share of fs.inotify.max_user_watches allows (nothing watched), else 0.")
    static let watchInstances = MetricFamily("thumbd_library_watch_instances", .gauge,
                                             "inotify instances watching the library (0: library_watch off).")

    static let placeholders = MetricFamily("thumbd_placeholders", .gauge, "Listed images by placeholder (thumbhash) state.")
    static let placeholdersMade = MetricFamily("thumbd_placeholders_made_total", .counter,
                                               "Placeholders made, beside a render, by the backfill or from an embedded preview.")
    static let placeholdersFromPeers = MetricFamily("thumbd_placeholders_from_peers_total", .counter,
                                                    "Placeholders other nodes of the cluster made, taken into this node's index.")
    static let placeholderSeconds = MetricFamily(
        "thumbd_placeholder_seconds_total", .counter,
        "Time spent on placeholders: shrinking renders' pixels, hashing, storing, reading embedded previews, and the backfill's renders.")
    static let backfillRenders = MetricFamily("thumbd_placeholder_backfill_renders_total", .counter,
                                              "Backfill renders run (failed ones included).")
    static let backfillFailed = MetricFamily("thumbd_placeholder_backfill_failed_total", .counter,
                                             "Backfill renders that made no placeholder.")
    static let backfillSeconds = MetricFamily("thumbd_placeholder_backfill_seconds_total", .counter,
                                              "Wall-clock seconds backfill passes have run, yielding included.")
    static let backfillRunning = MetricFamily("thumbd_placeholder_backfill_running", .gauge, "1 while a backfill pass is under way.")

    static let connectionsOpen = MetricFamily("thumbd_connections_open", .gauge, "Open client connections.")
    static let connectionsTotal = MetricFamily("thumbd_connections_total", .counter, "Connections accepted.")
    static let eventLoopWaitErrors = MetricFamily("thumbd_event_loop_wait_errors_total", .counter,
                                                  "epoll_wait calls of the HTTP event loops that failed (each followed by a 10 ms pause).")
    static let indexWriteErrors = MetricFamily("thumbd_index_write_errors_total", .counter,
                                               "Writes of the listing to index.sqlite that failed (the listing in memory stays right).")
    static let placeholderWriteErrors = MetricFamily("thumbd_placeholder_write_errors_total", .counter,
                                                     "Writes of placeholders to index.sqlite that failed (those in memory stay right).")
    static let descriptorBudget = MetricFamily(
        "thumbd_descriptor_budget", .gauge,
        "How the open-file limit is shared out at start: the limit, the reserve, and the most connections, kept-open disk entries and memfds.")
    static let descriptorShortages = MetricFamily(
        "thumbd_descriptor_shortages_total", .counter,
        "Requests answered 503 out_of_descriptors: no file descriptor was free (EMFILE, ENFILE).")

    static let videoDecodes = MetricFamily("thumbd_video_decodes_total", .counter,
                                           "Video poster decodes in the helper processes, by outcome.")
    static let videoHelperFaults = MetricFamily(
        "thumbd_video_helper_faults_total", .counter,
        "Video helpers that died during a decode (crash), were killed for giving no answer in time (hang), or were killed from outside (killed: SIGKILL, e.g. out of memory).")
    static let videoHelpersStarted = MetricFamily("thumbd_video_helpers_started_total", .counter, "Video helper processes started.")

    // The process series of Prometheus' client libraries (client_golang's process collector):
    // their names, kinds and help texts.
    static let processCPU = MetricFamily("process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.")
    static let processResident = MetricFamily("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.")
    static let processVirtual = MetricFamily("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.")
    static let processOpenFDs = MetricFamily("process_open_fds", .gauge, "Number of open file descriptors.")
    static let processMaxFDs = MetricFamily("process_max_fds", .gauge, "Maximum number of open file descriptors.")
    static let processStartTime = MetricFamily("process_start_time_seconds", .gauge,
                                               "Start time of the process since unix epoch in seconds.")
    static let threads = MetricFamily("thumbd_threads", .gauge, "Threads of the thumbd process (num_threads in /proc/self/stat).")
    static let vipsMemory = MetricFamily("thumbd_vips_memory_bytes", .gauge,
                                         "Bytes libvips holds through its tracked allocator now (vips_tracked_get_mem).")
    static let vipsMemoryHighwater = MetricFamily(
        "thumbd_vips_memory_highwater_bytes", .gauge,
        "The most bytes libvips' tracked allocator has held at once since the server started (vips_tracked_get_mem_highwater).")
}
