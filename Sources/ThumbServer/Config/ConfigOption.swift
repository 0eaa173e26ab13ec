/// One scalar configuration key: its name in the config file, its `THUMBD_*` variable and
/// `--flag`, its help text, and how to read and write it on `Config`.
struct ConfigOption: Sendable {
    enum Kind: Sendable {
        case string, integer, number, boolean, list
        /// One of a few words (listed in `bounds`); also a boolean word, so that a key that
        /// was a boolean keeps reading `true` and `false`, and `--key` alone is `true`.
        case choice
    }

    let key: String
    let kind: Kind
    let help: String
    let get: @Sendable (Config) -> String
    let set: @Sendable (inout Config, String) -> Bool
    /// The allowed values of a number, as text ("0 to 65535"); empty for other kinds.
    var bounds = ""
    /// A list's value as the config file spells it, for the sentence that refuses another
    /// spelling there (`["127.0.0.1", "10.0.0.0/8"]`); empty for other kinds.
    var example = ""
    /// Whether a reload (SIGHUP) puts a new value in force (`ConfigReload`); the others take a
    /// restart, and a reload leaves them as they were. `false` unless `reloadable()`.
    var reloads = false

    /// This option, taking effect on a reload.
    func reloadable() -> ConfigOption {
        var option = self
        option.reloads = true
        return option
    }

    var environmentName: String { "THUMBD_" + key.uppercased() }
    var flag: String { "--" + key.replacingOccurrences(of: "_", with: "-") }

    static func string(_ key: String, _ path: WritableKeyPath<Config, String> & Sendable, _ help: String) -> ConfigOption {
        ConfigOption(key: key, kind: .string, help: help, get: { $0[keyPath: path] },
                     set: { config, text in config[keyPath: path] = text; return true })
    }

    static func integer(_ key: String, _ path: WritableKeyPath<Config, Int> & Sendable, _ help: String,
                        range: ClosedRange<Int>) -> ConfigOption {
        ConfigOption(key: key, kind: .integer, help: help, get: { String($0[keyPath: path]) },
                     set: { config, text in
                         guard let value = Int(text), range.contains(value) else { return false }
                         config[keyPath: path] = value
                         return true
                     }, bounds: "\(range.lowerBound) to \(range.upperBound)")
    }

    static func number(_ key: String, _ path: WritableKeyPath<Config, Double> & Sendable, _ help: String,
                       range: ClosedRange<Double>) -> ConfigOption {
        ConfigOption(key: key, kind: .number, help: help, get: { String($0[keyPath: path]) },
                     set: { config, text in
                         guard let value = Double(text), range.contains(value) else { return false }
                         config[keyPath: path] = value
                         return true
                     }, bounds: "\(range.lowerBound) to \(range.upperBound)")
    }

    static func boolean(_ key: String, _ path: WritableKeyPath<Config, Bool> & Sendable, _ help: String) -> ConfigOption {
        ConfigOption(key: key, kind: .boolean, help: help, get: { String($0[keyPath: path]) },
                     set: { config, text in
                         switch text.lowercased() {
                         case "true", "1", "yes", "on": config[keyPath: path] = true
                         case "false", "0", "no", "off": config[keyPath: path] = false
                         default: return false
                         }
                         return true
                     })
    }

    /// The access log's format: a word of `AccessLogFormat`, or a boolean word (`false` is
    /// `off`, `true` `brief`).
    static func accessLogFormat(_ key: String, _ path: WritableKeyPath<Config, AccessLogFormat> & Sendable,
                                _ help: String) -> ConfigOption {
        ConfigOption(key: key, kind: .choice, help: help, get: { $0[keyPath: path].rawValue },
                     set: { config, text in
                         guard let format = AccessLogFormat(configValue: text) else { return false }
                         config[keyPath: path] = format
                         return true
                     }, bounds: AccessLogFormat.words)
    }

    /// Whether `text` is a value this option takes.
    func accepts(_ text: String) -> Bool {
        var probe = Config()
        return set(&probe, text)
    }

    /// A list of words: a JSON array of strings in the config file, comma-separated (spaces
    /// around the commas ignored) in the environment and on the command line (`entries(of:)`);
    /// `set` refuses a text with an entry `fault(in:)` finds. `example`: its value as the file
    /// spells it.
    static func list(_ key: String, _ path: WritableKeyPath<Config, [String]> & Sendable, _ help: String,
                     example: String) -> ConfigOption {
        ConfigOption(key: key, kind: .list, help: help, get: { $0[keyPath: path].joined(separator: ",") },
                     set: { config, text in
                         let entries = entries(of: text)
                         guard fault(in: entries) == nil else { return false }
                         config[keyPath: path] = entries
                         return true
                     }, example: example)
    }

    /// A list's entries in the environment's and the command line's spelling: split at each
    /// comma, the spaces around each entry dropped; none for a text of spaces only (the empty
    /// list). `a,,b` and `a,` keep their empty entry, for `fault(in:)` to refuse.
    static func entries(of text: String) -> [String] {
        guard text.contains(where: { !$0.isWhitespace }) else { return [] }
        return text.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingWhitespace()) }
    }

    /// Why `entries` (a list's, in order) are no list of words, naming the first entry at
    /// fault by its position from 1 (never by its text, which may be a secret): it is empty
    /// (`""`, or two commas in a row), has white space at its start or end (a JSON string is
    /// taken as written), or holds a comma (which separates entries outside the file). Nil when
    /// every entry is a word.
    static func fault(in entries: [String]) -> String? {
        for (index, entry) in entries.enumerated() {
            if entry.isEmpty { return "entry \(index + 1) is empty" }
            if entry.first!.isWhitespace || entry.last!.isWhitespace {
                return "entry \(index + 1) has white space at its " + (entry.first!.isWhitespace ? "start" : "end")
            }
            if entry.contains(",") {
                return "entry \(index + 1) holds a comma: give each entry as a string of its own"
            }
        }
        return nil
    }

    /// Every scalar key, in the order `--help` lists them.
    static let all: [ConfigOption] = [
        .string("library", \.library, "photo library root directory (required)"),
        .string("host", \.host, "address to bind"),
        .integer("port", \.port, "TCP port (0 = any free port)", range: 0...65535),
        .string("cache_dir", \.cacheDirectory, "disk cache directory"),
        .integer("memory_cache_bytes", \.memoryCacheBytes, "memory cache limit, bytes", range: 0...(1 << 40)).reloadable(),
        .integer("disk_cache_bytes", \.diskCacheBytes, "disk cache limit, bytes", range: 0...(1 << 50)).reloadable(),
        .integer("render_workers", \.renderWorkers, "render threads (0 = one per core)", range: 0...256),
        .integer("prefetch_workers", \.prefetchWorkers,
                 "render threads prefetch may use at once while no client waits (0 = all)", range: 0...256),
        .integer("render_queue_limit", \.renderQueueLimit, "misses waiting for a render before 503", range: 1...1_000_000),
        .number("render_timeout_seconds", \.renderTimeoutSeconds, "seconds a client waits for a render (0 = none)", range: 0...3600),
        .integer("video_decoders", \.videoDecoders, "video helper processes decoding poster frames at once (0 = videos not decoded)",
                 range: 0...64),
        .number("video_decode_timeout_seconds", \.videoDecodeTimeoutSeconds,
                "seconds one video's poster decode may take before its helper is killed and the request gets 503",
                range: 0.1...600),
        .string("admin_token", \.adminToken, "bearer token for /prefetch changes, /stats, /metrics (empty = open)").reloadable(),
        .list("signing_keys", \.signingKeys,
              "keys of signed thumbnail URLs, comma-separated ID:HEXSECRET (empty = thumbnails unsigned)",
              example: #"["ID:HEXSECRET"]"#).reloadable(),
        .integer("signed_url_max_seconds", \.signedURLMaxSeconds, "longest a signed thumbnail URL may still live, seconds",
                 range: 1...(10 * 365 * 86400)).reloadable(),
        .integer("signed_url_bucket_seconds", \.signedURLBucketSeconds,
                 "expiries thumbd signs round up to a multiple of this, seconds", range: 1...86400).reloadable(),
        .integer("prefetch_client_jobs", \.prefetchClientJobs, "running prefetch jobs one client may have (0 = no limit)",
                 range: 0...1_000_000),
        .integer("prefetch_client_items_per_job", \.prefetchClientItemsPerJob, "items one prefetch job may name (0 = no limit)",
                 range: 0...1_000_000),
        .integer("prefetch_client_items_per_minute", \.prefetchClientItemsPerMinute,
                 "items one client's prefetch jobs may name per minute (0 = no limit)", range: 0...100_000_000),
        .list("cors_origins", \.corsOrigins,
              "origins whose pages may read thumbnails and /assets cross-origin: * or a comma-separated list (empty = no CORS)",
              example: #"["https://photos.example.com", "http://localhost:5173"]"#).reloadable(),
        .integer("quality", \.quality, "JPEG/WebP quality", range: 1...100),
        .boolean("webp", \.webp, "serve WebP to clients that accept it"),
        .boolean("derive_grids", \.deriveGrids, "render a smaller cover grid from a cached larger one of the same photo"),
        .integer("max_source_pixels", \.maxSourcePixels, "source pixel limit (width x height)", range: 1...(1 << 40)),
        .integer("max_source_bytes", \.maxSourceBytes, "source file size limit, bytes (0 = none)", range: 0...(1 << 50)),
        .string("cache_control", \.cacheControl, "Cache-Control of thumbnails at their versioned URL (?v= current)"),
        .string("cache_control_unversioned", \.cacheControlUnversioned,
                "Cache-Control of thumbnails without ?v= or with a stale one"),
        .integer("max_connections", \.maxConnections, "open connections before new ones wait", range: 1...1_000_000),
        .number("header_timeout_seconds", \.headerTimeoutSeconds, "seconds to receive request headers", range: 0.1...3600),
        .number("body_timeout_seconds", \.bodyTimeoutSeconds, "seconds to receive a request body once its headers are in",
                range: 0.1...3600),
        .number("idle_timeout_seconds", \.idleTimeoutSeconds, "seconds an idle keep-alive connection is kept", range: 0.1...86400),
        .integer("max_header_bytes", \.maxHeaderBytes, "request line + headers limit, bytes", range: 256...(1 << 20)),
        .integer("max_body_bytes", \.maxBodyBytes, "request body limit, bytes", range: 0...(1 << 30)),
        .number("shutdown_grace_seconds", \.shutdownGraceSeconds, "seconds in-flight requests get on SIGTERM", range: 0...600),
        .boolean("library_watch", \.libraryWatch, "notice library changes through inotify, so hits skip a stat of their source"),
        .number("library_watch_max_share", \.libraryWatchMaxShare,
                "most of fs.inotify.max_user_watches the library watch may take (one per directory)", range: 0...1),
        .number("index_rescan_seconds", \.indexRescanSeconds,
                "seconds between whole library rescans while the watch cannot see every change", range: 0.1...86400),
        .number("index_sweep_seconds", \.indexSweepSeconds,
                "seconds between safety sweeps of the whole library while the watch sees every change (0: none)", range: 0...604800),
        .accessLogFormat("access_log", \.accessLog,
                         "one line per request in this format; combined is nginx's, then request time, X-Cache and render ms").reloadable(),
        .string("access_log_file", \.accessLogFile,
                "file the access log is appended to, reopened on SIGUSR1 (empty = stdout)").reloadable(),
        .list("trusted_proxies", \.trustedProxies,
              "addresses and CIDR ranges of proxies whose X-Forwarded-For names the client in the access log (empty = none)",
              example: #"["127.0.0.1", "10.0.0.0/8"]"#).reloadable(),
        .list("peers", \.peers,
              "the cluster's nginx upstream: each server line as ADDRESS or ADDRESS weight=N, comma-separated (empty = one node)",
              example: #"["127.0.0.1:8081", "127.0.0.1:8082 weight=2"]"#),
        .string("node", \.node, "which of peers this node is, its address as written there"),
        .number("peer_timeout_seconds", \.peerTimeoutSeconds, "seconds a node-to-node call may take", range: 0.01...600),
        .number("peer_down_seconds", \.peerDownSeconds, "nginx's fail_timeout: seconds a failed peer that answers again may still be passed over, unless nginx sends it a request first",
                range: 0...3600),
        .boolean("thumbhash_backfill", \.thumbhashBackfill,
                 "make the listing's placeholders of images not yet rendered, while no client miss or prefetch waits"),
        .boolean("thumbhash_previews", \.thumbhashPreviews,
                 "make the listing's placeholders of photos from their embedded previews (EXIF thumbnail, HEIF thumbnail) as scans list them"),
    ]
}
