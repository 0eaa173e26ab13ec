import Rendering

/// Which tier answered a request (the `X-Cache` header of docs/API.md).
public enum CacheTier: String, Sendable {
    case memory = "HIT-MEMORY"
    case disk = "HIT-DISK"
    case miss = "MISS"
}

/// A thumbnail and how it was obtained.
public struct ThumbnailResult: Sendable {
    /// Where the encoded bytes are.
    public enum Body: Sendable {
        case bytes([UInt8])
        /// A hit to send from a file (only to callers that accept files): a memory hit held in
        /// a memfd, or a disk hit from its open entry when the memory tier keeps nothing.
        case file(ThumbnailFile)
    }

    public var body: Body
    public var format: ImageFormat
    /// px.
    public var width: Int, height: Int
    public var tier: CacheTier
    /// Render time of the render this request waited for, ms; nil for hits.
    public var renderMilliseconds: Double?

    /// A result whose bytes are in `thumbnail`; `renderMilliseconds` only for a miss.
    public init(thumbnail: Thumbnail, tier: CacheTier, renderMilliseconds: Double? = nil) {
        self.init(body: .bytes(thumbnail.bytes), format: thumbnail.format, width: thumbnail.width,
                  height: thumbnail.height, tier: tier, renderMilliseconds: renderMilliseconds)
    }

    public init(body: Body, format: ImageFormat, width: Int, height: Int, tier: CacheTier,
                renderMilliseconds: Double? = nil) {
        self.body = body
        self.format = format
        self.width = width
        self.height = height
        self.tier = tier
        self.renderMilliseconds = renderMilliseconds
    }

    /// The thumbnail, when its bytes are in memory (every render; hits not sent from a file).
    public var thumbnail: Thumbnail? {
        guard case .bytes(let bytes) = body else { return nil }
        return Thumbnail(bytes: bytes, format: format, width: width, height: height)
    }
}

/// Where a hit's bytes lie in an open file: `count` bytes from `offset` of `fd`, which `owner`
/// keeps open for as long as this value is held.
public struct ThumbnailFile: Sendable {
    public let fd: Int32
    /// Bytes.
    public let offset: Int
    public let count: Int
    public let owner: any AnyObject & Sendable
}

/// Why no thumbnail could be given.
public enum ThumbnailError: Error, Sendable, Equatable {
    /// The source could not be rendered (its kind maps to 404/415/422/500).
    case render(RenderError)
    /// The render queue is full (503 with `Retry-After`).
    case overloaded
    /// The render took longer than `renderDeadlineSeconds` (503). It goes on, and its result is
    /// still cached for the next request.
    case deadlineExceeded
}

public typealias ThumbnailCompletion = @Sendable (Result<ThumbnailResult, ThumbnailError>) -> Void
