import Rendering

/// Settings of the cache and render pipeline. Every default matches `config/thumbd.json`.
public struct PipelineConfiguration: Sendable {
    /// Where the disk cache lives (`entries/`, `tmp/`). Created if missing.
    public var cacheDirectory: String
    /// Memory cache bound, bytes. `256 MiB` by default.
    public var memoryLimitBytes: Int = 256 << 20
    /// Disk cache bound, bytes (counted in 4 KiB blocks). `2 GiB` by default.
    public var diskLimitBytes: Int = 2 << 30
    /// Render worker threads; 0 = one per core. `0` by default.
    public var renderWorkers: Int = 0
    /// Render workers prefetch work may hold at once; 0 = all. `0` by default.
    public var prefetchWorkers: Int = 0
    /// Client misses allowed to wait for a render worker before new ones get 503. `1024` by default.
    public var renderQueueLimit: Int = 1024
    /// Source pixel limit (width × height from the header, before decoding). `100_000_000` by default.
    public var maxSourcePixels: Int = 100_000_000
    /// Source file size limit, bytes, for photos (a video's poster reads only its header and a
    /// few keyframes); 0 = none. `256 MiB` by default.
    public var maxSourceBytes: Int = 256 << 20
    /// Seconds a client waits for a render before it gets 503; 0 = no deadline. `30` by default.
    public var renderDeadlineSeconds: Double = 30
    /// Memory-tier entries that may keep their bytes in sealed memfds (`MemoryFile`, one
    /// descriptor each, sent with `sendfile`); the rest keep arrays. `0` (none) by default;
    /// thumbd sets it from the descriptor limit.
    public var memoryFileBudget: Int = 0
    /// The library root (resolved) that the cache directory must stay apart from if it has to be
    /// made again while the server runs (`CacheDirectory.reclaim`). `nil` (none checked) by
    /// default; thumbd sets it to the library it serves.
    public var libraryRoot: String?
    /// Disk entries kept open for `sendfile` while the memory tier is off (one descriptor each;
    /// `DiskCache.openWithoutWaiting`); 0 keeps none (each hit opens and checks its file).
    /// `256` by default; thumbd sets it from the descriptor limit.
    public var openDiskEntryLimit: Int = 256

    /// The server's grids: where a smaller `cover` grid may be derived from
    /// (`ThumbnailPipeline.derivationDonor`). The three of docs/API.md (`GridSpec.defaults`) by
    /// default, as the routes'.
    public var grids: [GridSpec] = GridSpec.defaults
    /// Whether a `cover` grid is rendered from a cached larger grid of the same source when one
    /// gives the same picture (`derive_grids`). `true` by default.
    public var deriveGrids = true

    /// How long a client waits for a render, ns, from `renderDeadlineSeconds` (at most 10^6 s);
    /// nil when there is no deadline (0).
    var waitNanoseconds: UInt64? {
        renderDeadlineSeconds > 0 ? UInt64(min(renderDeadlineSeconds, 1e6) * 1e9) : nil
    }

    /// Every default but the cache directory (tests, tools).
    public init(cacheDirectory: String) {
        self.cacheDirectory = cacheDirectory
    }

    /// Every setting, named: the mapping from the server's config (`Config.pipeline`) goes
    /// through this, so a setting added here and not mapped there does not compile.
    public init(cacheDirectory: String, memoryLimitBytes: Int, diskLimitBytes: Int, renderWorkers: Int,
                prefetchWorkers: Int, renderQueueLimit: Int, maxSourcePixels: Int, maxSourceBytes: Int,
                renderDeadlineSeconds: Double, memoryFileBudget: Int, libraryRoot: String?, openDiskEntryLimit: Int,
                grids: [GridSpec], deriveGrids: Bool) {
        self.cacheDirectory = cacheDirectory
        self.memoryLimitBytes = memoryLimitBytes
        self.diskLimitBytes = diskLimitBytes
        self.renderWorkers = renderWorkers
        self.prefetchWorkers = prefetchWorkers
        self.renderQueueLimit = renderQueueLimit
        self.maxSourcePixels = maxSourcePixels
        self.maxSourceBytes = maxSourceBytes
        self.renderDeadlineSeconds = renderDeadlineSeconds
        self.memoryFileBudget = memoryFileBudget
        self.libraryRoot = libraryRoot
        self.openDiskEntryLimit = openDiskEntryLimit
        self.grids = grids
        self.deriveGrids = deriveGrids
    }
}
