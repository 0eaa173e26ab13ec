import Cluster
import Rendering
import Thumbnails

/// What the routes need to know beyond the pipeline. Every default matches `config/thumbd.json`.
public struct ServiceConfiguration: Sendable {
    /// The grid specs, by name. The three of docs/API.md by default.
    public var grids: [GridSpec] = GridSpec.defaults
    /// `Cache-Control` of a thumbnail asked for by its versioned URL, whose `?v=` is the current
    /// `ThumbnailVersion` token of its source (the URLs `/assets` lists): the URL changes when the
    /// thumbnail does, so it may be kept for good (a signed URL's, until its `exp` at most:
    /// `thumbnailCacheControl`). `public, max-age=31536000, immutable` by default.
    public var cacheControl = "public, max-age=31536000, immutable"
    /// `Cache-Control` of a thumbnail asked for without `?v=`, or with a `v` that is not its
    /// source's current token (a replaced photo, a stale listing): the URL stays when the photo
    /// changes, so a cache must ask again (with `If-None-Match`, answered `304`). Capped at a
    /// signed URL's `exp` as `cacheControl` is.
    /// `public, no-cache` by default.
    public var unversionedCacheControl = "public, no-cache"
    /// Whether `Accept: image/webp` gives WebP. `true` by default.
    public var webpEnabled = true
    /// When non-empty, admin routes need `Authorization: Bearer <adminToken>`. Empty by default.
    public var adminToken = "" {
        didSet { adminTokenDigest = Crypto.sha256(Array(adminToken.utf8)) }
    }
    /// SHA-256 of `adminToken`, what a presented token's digest is compared with (worked out
    /// once, when the token is set).
    private(set) var adminTokenDigest = Crypto.sha256([])
    /// Signed thumbnail URLs (`signing_keys`, `signed_url_max_seconds`, `signed_url_bucket_seconds`):
    /// off (no keys) by default.
    public var signing = URLSigning()
    /// The app's bearer keys (`client_keys`), by SHA-256. With any, `/assets` and `/prefetch…`
    /// need one of them or the admin token (`ThumbService.client(for:changing:)`). None by default.
    public var clientKeys: [ClientKey] = []
    /// What one client may prefetch (`prefetch_client_jobs`, `prefetch_client_items_per_job`,
    /// `prefetch_client_items_per_minute`); `PrefetchLimits()`'s by default.
    public var prefetchLimits = PrefetchLimits()
    /// JPEG/WebP quality, 1...100. `80` by default.
    public var quality = 80
    /// Cross-origin access to the public routes (`cors_origins`). Off by default.
    var cors = CORSPolicy(origins: [])
    /// How the open-file limit is shared out, for `/stats` and `/metrics`; nil (reported as
    /// `null`) when the service runs without a `Thumbd` that decided one. `nil` by default.
    public var descriptors: DescriptorBudget?

    /// This node's place in the cluster (`peers`, `node`, `peer_*`): named in `/stats` and
    /// `/metrics`, and where prefetch items other nodes own are forwarded; nil (a single node)
    /// by default.
    public var cluster: ClusterSettings?

    public init() {}

    /// Every field given: what `Config` maps (a field added here and not there does not compile).
    init(grids: [GridSpec], cacheControl: String, unversionedCacheControl: String, webpEnabled: Bool, adminToken: String,
         signing: URLSigning, clientKeys: [ClientKey], prefetchLimits: PrefetchLimits, quality: Int, cors: CORSPolicy,
         descriptors: DescriptorBudget?, cluster: ClusterSettings?) {
        self.grids = grids
        self.cacheControl = cacheControl
        self.unversionedCacheControl = unversionedCacheControl
        self.webpEnabled = webpEnabled
        self.adminToken = adminToken
        adminTokenDigest = Crypto.sha256(Array(adminToken.utf8))
        self.signing = signing
        self.clientKeys = clientKeys
        self.prefetchLimits = prefetchLimits
        self.quality = quality
        self.cors = cors
        self.descriptors = descriptors
        self.cluster = cluster
    }

    func grid(named name: String) -> GridSpec? { grids.first { $0.name == name } }
}
