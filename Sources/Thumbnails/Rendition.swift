import Rendering

/// What, besides the source file and the output format, decides a thumbnail's pixels: the
/// pipeline version (and, for a video's poster, the poster pipeline's), the grid spec's box and
/// fit, and the encoder quality. The one home of that
/// list: the cache key (`CacheKey.canonical`, hence the disk entry and the ETag) and the `v` of
/// a versioned URL (`ThumbnailVersion`) are both built from its texts, so a field that decides
/// pixels cannot reach one and not the other (a new picture under an `immutable` URL).
/// `RenditionTests` fails when a stored field is added here and not to both.
public struct Rendition: Sendable, Hashable {
    /// Bumped whenever rendering changes what bytes a key stands for.
    public static let pipelineVersion = 1
    /// Bumped whenever making a video's poster frame changes what bytes a key of a video stands
    /// for: only videos' keys and `v` tokens change, photos' stay. `2` since posters are stretched
    /// to the display aspect of non-square pixels (issue 31, item 4).
    public static let posterVersion = 2

    public let spec: GridSpec
    /// JPEG/WebP quality, 1...100.
    public let quality: Int
    /// Whether the source is a video (`VideoFormats.isVideo` of its path): its thumbnail is a
    /// poster frame's, and `posterVersion` decides it too.
    public let videoPoster: Bool

    /// `videoPoster`: false (a photo) by default.
    public init(spec: GridSpec, quality: Int, videoPoster: Bool = false) {
        self.spec = spec
        self.quality = quality
        self.videoPoster = videoPoster
    }

    /// `v1`: the pipeline version; `v1p2` for a video's poster (with the poster version).
    var versionText: String {
        videoPoster ? "v\(Self.pipelineVersion)p\(Self.posterVersion)" : "v\(Self.pipelineVersion)"
    }
    /// `393x393:cover`: the box and the fit.
    var boxText: String { "\(spec.width)x\(spec.height):\(spec.fit.rawValue)" }
    /// `q80`.
    var qualityText: String { "q\(quality)" }

    /// The text `ThumbnailVersion` seeds its hash with: `v1|393x393:cover|q80`.
    var tokenText: String { "\(versionText)|\(boxText)|\(qualityText)" }

    /// The cache key's text of these fields with the grid's name and the format choice between
    /// them, as disk entries have always spelled it: `v1|3:393x393:cover|auto|q80`.
    func keyText(format: FormatChoice) -> String {
        "\(versionText)|\(spec.name):\(boxText)|\(format.rawValue)|\(qualityText)"
    }
}
