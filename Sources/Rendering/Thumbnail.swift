/// An encoded thumbnail, ready to send or store.
public struct Thumbnail: Sendable {
    /// The encoded image; no metadata (EXIF, GPS, XMP, IPTC, ICC) is left in it.
    public let bytes: [UInt8]
    /// The encoding of `bytes`.
    public let format: ImageFormat
    /// Width, px.
    public let width: Int
    /// Height, px.
    public let height: Int
    /// The render's placeholder image (`RenderRequest.placeholderSide`); nil when not asked
    /// for or when it could not be made. Never stored with the thumbnail.
    public let placeholder: PlaceholderImage?
    /// Whether this is what decoded of a damaged source: a JPEG libvips refused at
    /// `fail_on=truncated` (cut short, or a scan it could not finish), rendered at `fail_on=none`
    /// with the rest filled as libjpeg fills it (grey). `false` by default. Not stored with the
    /// thumbnail: a cache hit or a derived grid says `false` (`renders.degraded` counts renders).
    public let degraded: Bool

    /// A thumbnail of `bytes` in `format`, `width` x `height` px; `placeholder` and `degraded`
    /// as the fields of the same names (nil and `false` by default).
    public init(bytes: [UInt8], format: ImageFormat, width: Int, height: Int, placeholder: PlaceholderImage? = nil,
                degraded: Bool = false) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.placeholder = placeholder
        self.degraded = degraded
    }
}
