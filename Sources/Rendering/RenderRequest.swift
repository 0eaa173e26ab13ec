/// One thumbnail to make: which source, which grid, which encoding.
public struct RenderRequest: Sendable {
    /// Absolute path of the source (bytes, as on disk), already resolved and checked by the caller.
    public var source: DiskPath
    /// The grid box and fit the thumbnail is made for.
    public var spec: GridSpec
    /// The encoding; `nil` (default) chooses from the source's header: JPEG for opaque sources,
    /// PNG for sources with an alpha channel (GIFs, which libvips loads with alpha, give PNG).
    public var format: ImageFormat?
    /// JPEG/WebP quality, 1...100 (clamped). `80` by default (docs/API.md).
    public var quality: Int
    /// Pixel limit (width x height of one page, px) judged from the header before any decode;
    /// `100_000_000` by default (docs/API.md); `0` means no limit.
    public var maxPixels: Int
    /// The identity the caller resolved the source to (and keyed the result by), with
    /// `source` then free of symlinks (a realpath). The render fails with `.sourceChanged`
    /// when a symlink is now on the way to `source`, or the file it opens has another
    /// identity or gets another while it is read. `nil` (default): not checked, and `source`
    /// may go through symlinks.
    public var expectedSource: SourceIdentity?
    /// Also make a placeholder image of at most this many px a side (`Thumbnail.placeholder`),
    /// shrunk from the rendered pixels, not decoded again, of the whole picture (a square
    /// `cover` grid's covering image before its crop, the thumbnail's bytes unchanged; from a
    /// donor thumbnail or a cover box that is not square, the centre crop); `0` (default): none.
    public var placeholderSide = 0

    /// A request for the source at `source`; the other parameters are the fields of the same names.
    public init(source: DiskPath, spec: GridSpec, format: ImageFormat? = nil,
                quality: Int = 80, maxPixels: Int = 100_000_000, expectedSource: SourceIdentity? = nil) {
        self.source = source
        self.spec = spec
        self.format = format
        self.quality = quality
        self.maxPixels = maxPixels
        self.expectedSource = expectedSource
    }

    /// A request for the source at `sourcePath` (its UTF-8 bytes).
    public init(sourcePath: String, spec: GridSpec, format: ImageFormat? = nil,
                quality: Int = 80, maxPixels: Int = 100_000_000, expectedSource: SourceIdentity? = nil) {
        self.init(source: DiskPath(sourcePath), spec: spec, format: format, quality: quality, maxPixels: maxPixels,
                  expectedSource: expectedSource)
    }
}
