import Rendering

/// What the routes need to know beyond the pipeline. Every default matches `config/thumbd.json`.
public struct ServiceConfiguration: Sendable {
    /// The grid specs, by name. The three of API.md by default.
    public var grids: [GridSpec] = GridSpec.defaults
    /// `Cache-Control` on thumbnails. `public, max-age=31536000, immutable` by default.
    public var cacheControl = "public, max-age=31536000, immutable"
    /// Whether `Accept: image/webp` gives WebP. `true` by default.
    public var webpEnabled = true
    /// When non-empty, admin routes need `Authorization: Bearer <adminToken>`. Empty by default.
    public var adminToken = ""
    /// JPEG/WebP quality, 1...100. `80` by default.
    public var quality = 80

    public init() {}

    func grid(named name: String) -> GridSpec? { grids.first { $0.name == name } }
}
