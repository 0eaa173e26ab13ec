import Foundation
import Rendering

/// Everything thumbd can be told, with its defaults (the same as `config/thumbd.json`).
/// Built by `ConfigLoader` from defaults < config file < `THUMBD_*` environment < flags.
public struct Config: Sendable, Equatable {
    /// The photo library root (`library`). Required.
    public var library = ""
    /// Bind address (`host`). `127.0.0.1` by default: not exposed until asked.
    public var host = "127.0.0.1"
    /// TCP port (`port`); 0 picks a free one. `8080` by default.
    public var port = 8080
    /// Disk cache directory (`cache_dir`). `.thumbd-cache` by default (relative to the working directory).
    public var cacheDirectory = ".thumbd-cache"
    /// Memory cache bound, bytes (`memory_cache_bytes`). `268435456` (256 MiB) by default.
    public var memoryCacheBytes = 256 << 20
    /// Disk cache bound, bytes (`disk_cache_bytes`). `2147483648` (2 GiB) by default.
    public var diskCacheBytes = 2 << 30
    /// Render worker threads (`render_workers`); 0 = one per core. `0` by default.
    public var renderWorkers = 0
    /// Render threads prefetch work may hold at once (`prefetch_workers`); 0 = all of them.
    /// Client misses always go first; a miss that finds every thread on prefetch waits for the
    /// first to finish (one render). `0` by default.
    public var prefetchWorkers = 0
    /// Client misses that may wait for a worker before 503 (`render_queue_limit`). `1024` by default.
    public var renderQueueLimit = 1024
    /// Seconds a client waits for a render before 503 (`render_timeout_seconds`); 0 = none. `30` by default.
    public var renderTimeoutSeconds = 30.0
    /// Video helper processes, and so video decodes at once, at most (`video_decoders`; README
    /// "Videos"); 0 = videos are listed but not decoded (415). A 4K HEVC poster takes about
    /// 400 MB in its helper. `2` by default.
    public var videoDecoders = 2
    /// Seconds one video's poster decode may take (`video_decode_timeout_seconds`; README
    /// "Videos"): then its helper process is killed, its decoder slot freed for the next video,
    /// and the request answered `503 render_timeout` (counted in `/stats` `video.hangs`, not held
    /// against the file). Its own deadline, shorter than `render_timeout_seconds`, so that a
    /// decode that hangs holds one of the `video_decoders` slots seconds, not the client's whole
    /// wait. No 0 (none): a hung decoder would hold its slot for good. 0.1 to 600; `5` by default
    /// (a 4K HDR HEVC poster takes about 1 s on a loaded 2-core machine).
    public var videoDecodeTimeoutSeconds = 5.0
    /// When set, `POST`/`DELETE /prefetch`, `/stats` and `/metrics` need
    /// `Authorization: Bearer <admin_token>` (`admin_token`). Empty (open) by default.
    public var adminToken = ""
    /// Keys of signed thumbnail URLs (`signing_keys`): each `ID:SECRET`, the id of letters, digits,
    /// `-`, `.` and `_` (at most 64), the secret at least 64 hex digits (32 bytes). With one or
    /// more, every thumbnail URL must be signed (`URLSigning`); the first signs what thumbd signs.
    /// A list in the config file; comma-separated in `THUMBD_SIGNING_KEYS`. Empty (off) by default.
    public var signingKeys: [String] = []
    /// The longest a signed URL may still live, seconds (`signed_url_max_seconds`). `604800` (7 days) by default.
    public var signedURLMaxSeconds = 604_800
    /// Expiries thumbd signs round up to a multiple of this, seconds (`signed_url_bucket_seconds`). `3600` by default.
    public var signedURLBucketSeconds = 3600
    /// Bearer keys of the app's clients for `/assets` and `/prefetch…` (`client_keys`, config file
    /// only: an array of `{"id", "sha256", "prefix", "expires"}`, see `ClientKey`). None by default:
    /// those routes stay as open as `admin_token` leaves them.
    public var clientKeys: [ClientKey] = []
    /// Running prefetch jobs one client may have at once (`prefetch_client_jobs`); 0 = no limit. `32` by default.
    public var prefetchClientJobs = 32
    /// Items one prefetch job may name (`prefetch_client_items_per_job`); 0 = no limit. `10000` by default.
    public var prefetchClientItemsPerJob = 10_000
    /// Items one client's prefetch jobs may name per minute (`prefetch_client_items_per_minute`,
    /// a token bucket of a minute's worth); 0 = no limit. `60000` by default.
    public var prefetchClientItemsPerMinute = 60_000
    /// Origins whose pages may read the public routes cross-origin (`cors_origins`; see
    /// `CORSPolicy`): empty is off, `["*"]` any origin, else exact origins as browsers send them
    /// (`https://photos.example.com`). A list in the config file; comma-separated in
    /// `THUMBD_CORS_ORIGINS` and `--cors-origins`. Empty (off) by default.
    public var corsOrigins: [String] = []
    /// JPEG/WebP quality 1...100 (`quality`). `80` by default.
    public var quality = 80
    /// WebP for clients whose `Accept` names it (`webp`). `true` by default.
    public var webp = true
    /// A smaller `cover` grid rendered from a cached larger grid of the same photo when one
    /// gives the same picture (`derive_grids`; `ThumbnailPipeline.derivationDonor`). `true` by default.
    public var deriveGrids = true
    /// Source pixel limit, from the header (`max_source_pixels`). `100000000` by default.
    public var maxSourcePixels = 100_000_000
    /// Photo size limit, bytes; 0 = none (`max_source_bytes`); videos are exempt (a poster reads
    /// the header and a few keyframes). `268435456` (256 MiB) by default.
    public var maxSourceBytes = 256 << 20
    /// `Cache-Control` of thumbnails asked for by their versioned URL, `?v=` the source's
    /// current version (`cache_control`). `public, max-age=31536000, immutable` by default.
    public var cacheControl = "public, max-age=31536000, immutable"
    /// `Cache-Control` of thumbnails asked for without `?v=` or with a stale one
    /// (`cache_control_unversioned`). `public, no-cache` by default: caches revalidate.
    public var cacheControlUnversioned = "public, no-cache"
    /// Open connections before new ones wait in the backlog (`max_connections`). `4096` by default.
    public var maxConnections = 4096
    /// Seconds to receive a request's head (`header_timeout_seconds`). `10` by default.
    public var headerTimeoutSeconds = 10.0
    /// Seconds to receive a request's whole body once its head is in (`body_timeout_seconds`),
    /// then 408: a body that trickles in (a prefetch POST a byte at a time) cannot hold a
    /// connection for longer. `10` by default.
    public var bodyTimeoutSeconds = 10.0
    /// Seconds an idle keep-alive connection is kept (`idle_timeout_seconds`). `75` by default.
    public var idleTimeoutSeconds = 75.0
    /// Request line and headers limit, bytes (`max_header_bytes`). `8192` by default.
    public var maxHeaderBytes = 8192
    /// Request body limit, bytes (`max_body_bytes`). `1048576` by default.
    public var maxBodyBytes = 1 << 20
    /// Seconds in-flight requests get on SIGTERM (`shutdown_grace_seconds`). `10` by default.
    public var shutdownGraceSeconds = 10.0
    /// Whether library changes are noticed through inotify(7) (`library_watch`), so that a hit
    /// trusts its resolved source without a `stat` while nothing changed (see `LibraryWatch`).
    /// `true` by default; turn it off for a network filesystem changed from other hosts, which
    /// inotify does not see (then every request `stat`s its source).
    public var libraryWatch = true
    /// The largest share of `fs.inotify.max_user_watches` (inotify(7): the watches one user may
    /// hold across all of their processes) the library watch may take, one watch per directory
    /// (`library_watch_max_share`). A library with more directories is not watched, so that other
    /// programs of the same user can still watch theirs: thumbd says so at start, and memoised
    /// URLs are resolved again on every request. `0.5` by default.
    public var libraryWatchMaxShare = 0.5
    /// Seconds between rescans of the whole library for added, changed and removed files while
    /// the library watch does not see every change (`library_watch` off, a directory it could not
    /// watch, over `library_watch_max_share`): `index_rescan_seconds`. With the watch, the
    /// listing follows its events instead. `2` by default.
    public var indexRescanSeconds = 2.0
    /// Seconds between safety sweeps, whole rescans made even while the watch sees everything,
    /// for the changes no inotify watch reports (see `LibraryWatch`): `index_sweep_seconds`;
    /// `0` for none. `3600` by default.
    public var indexSweepSeconds = 3600.0
    /// One line per request (`access_log`): `off`, `brief` (thumbd's own short line, what `true`
    /// has always written), `combined` (nginx's, then request time, `X-Cache` and render ms) or
    /// `json`; see `AccessLogFormat`. `false` is `off`, `true` `brief`. `off` by default.
    public var accessLog = AccessLogFormat.off
    /// The file the access log is appended to, reopened on SIGUSR1 (logrotate's `postrotate`)
    /// (`access_log_file`). Empty (stdout: journald under systemd) by default.
    public var accessLogFile = ""
    /// The peers whose `X-Forwarded-For` names the client in the access log (`trusted_proxies`):
    /// addresses and CIDR ranges, IPv4 or IPv6 (`IPRange`, `TrustedProxies`); any other peer is
    /// the client itself. A list in the config file; comma-separated in `THUMBD_TRUSTED_PROXIES`.
    /// Empty by default.
    public var trustedProxies: [String] = []
    /// Whether the placeholders (`thumbhash` in `/assets`) of images no render has made one for
    /// are made in the background, one render at a time while no client miss or prefetch waits
    /// (`thumbhash_backfill`; `ThumbhashBackfill`). Off, only renders for clients and prefetch
    /// make them. `true` by default.
    public var thumbhashBackfill = true
    /// Whether the scans make the placeholders of photos that carry an embedded preview (a
    /// JPEG's EXIF thumbnail, a HEIF's thumbnail item) from it, without decoding the photo, once
    /// the listing answers (`thumbhash_previews`; `PreviewPlaceholders`). A preview whose shape
    /// is not the photo's is not used. `true` by default.
    public var thumbhashPreviews = true
    /// The cluster's upstream (`peers`): every `server` line of the nginx upstream that hashes
    /// thumbnails to the nodes, each `ADDRESS` or `ADDRESS weight=N` exactly as nginx has it
    /// (nginx hashes the address text; see `ClusterPeers`). A list in the config file;
    /// comma-separated in `THUMBD_PEERS`. Empty (a single node) by default.
    public var peers: [String] = []
    /// Which of `peers` this node is (`node`): its address as written there. Required with
    /// `peers`; named in `/stats` and `/metrics`. Empty by default.
    public var node = ""
    /// Seconds a node-to-node call may take before the peer counts as failed
    /// (`peer_timeout_seconds`). `2` by default.
    public var peerTimeoutSeconds = 2.0
    /// nginx's `fail_timeout` (`peer_down_seconds`, whose nginx default is also 10 s): a failed
    /// peer that answers probes again is passed over at most this long (+ 1 s) unless nginx
    /// sends it a request first (`PeerHealth`). `10` by default.
    public var peerDownSeconds = 10.0
    /// The grid specs (`grids`, an array of `{"name","width","height","fit"}`). docs/API.md's three by default.
    public var grids: [GridSpec] = GridSpec.defaults

    public init() {}

    /// `signing_keys`, `signed_url_max_seconds` and `signed_url_bucket_seconds` as the routes use
    /// them; entries that are not `ID:HEX` are left out (`ConfigLoader.validate` refuses them).
    public var signing: URLSigning {
        var signing = URLSigning()
        signing.keys = signingKeys.compactMap { entry in
            guard let colon = entry.firstIndex(of: ":"), let secret = Crypto.bytes(hex: entry[entry.index(after: colon)...]) else {
                return nil
            }
            return URLSigning.Key(id: String(entry[..<colon]), secret: secret)
        }
        signing.maxLifetimeSeconds = signedURLMaxSeconds
        signing.bucketSeconds = signedURLBucketSeconds
        return signing
    }
}
