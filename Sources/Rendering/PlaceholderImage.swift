/// A render's placeholder image: its thumbnail's pixels shrunk to at most
/// `RenderRequest.placeholderSide` px a side, what a ThumbHash is made from (Sources/ThumbHash).
public struct PlaceholderImage: Sendable, Equatable {
    /// px, 1...`placeholderSide`
    public let width: Int
    /// px, 1...`placeholderSide`
    public let height: Int
    /// 8-bit sRGB RGBA, row by row, not premultiplied (alpha 255 for opaque sources; a JPEG's
    /// alpha is taken before it is flattened on white): `width * height * 4` bytes.
    public let rgba: [UInt8]
    /// What shrinking the rendered pixels to it took, µs.
    public let microseconds: Int

    public init(width: Int, height: Int, rgba: [UInt8], microseconds: Int) {
        self.width = width
        self.height = height
        self.rgba = rgba
        self.microseconds = microseconds
    }
}
