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

    public init(bytes: [UInt8], format: ImageFormat, width: Int, height: Int) {
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
    }
}
