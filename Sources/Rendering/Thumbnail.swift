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

    public init(bytes: [UInt8], format: ImageFormat, width: Int, height: Int, placeholder: PlaceholderImage? = nil) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.placeholder = placeholder
    }
}
