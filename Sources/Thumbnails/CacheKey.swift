import Foundation
import Library
import Rendering

/// What a requested thumbnail's format is decided by (docs/API.md, "output"): `automatic` is JPEG for
/// opaque sources and PNG for sources with alpha; the others are forced by `?format=` or chosen
/// from `Accept: image/webp`.
public enum FormatChoice: String, Sendable, Hashable {
    case automatic = "auto"
    case jpeg, png, webp

    /// The explicit format, or nil for `automatic`.
    public var format: ImageFormat? {
        switch self {
        case .automatic: nil
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        }
    }
}

/// The cache key of one thumbnail (docs/API.md, "The cache key covers"): the asset path as spelled
/// on disk (`ResolvedAsset.assetPath`: every URL spelling of one file gives the same), the
/// source identity, the format choice, and the `Rendition` (pipeline version, grid spec, quality). GET,
/// HEAD and prefetch build it the same way. `digest` names the disk entry and makes the ETag.
/// Immutable; a class so that handing a key along (every hit does, several times) is one
/// reference, not a copy of its six strings. Equal when the canonical text is, byte for byte.
public final class CacheKey: Sendable, Hashable {
    /// Bumped whenever rendering changes what bytes a key stands for (`Rendition.pipelineVersion`).
    public static var pipelineVersion: Int { Rendition.pipelineVersion }

    /// The asset path, as given (spelled as on disk).
    public let assetPath: DiskPath
    public let source: SourceIdentity
    public let format: FormatChoice
    /// What besides the source and format decides the pixels.
    public let rendition: Rendition
    public var spec: GridSpec { rendition.spec }
    /// JPEG/WebP quality, 1...100.
    public var quality: Int { rendition.quality }
    /// The canonical text of every field above; stored in disk entries to rule out collisions.
    public let canonical: String
    /// XXH3-128 of `canonical`, 32 hex characters.
    public let digest: String

    /// The key of `assetPath` (UTF-8 text, used byte for byte: NFC and NFD are two keys).
    public convenience init(assetPath: String, source: SourceIdentity, spec: GridSpec, format: FormatChoice, quality: Int) {
        self.init(asset: DiskPath(assetPath), source: source, spec: spec, format: format, quality: quality)
    }

    /// The key of asset path `asset`, bytes as on disk (perhaps not UTF-8). The library gives
    /// the disk's spelling whichever spelling the URL used, so one file is one key, and two
    /// files whose names differ only in Unicode form are two.
    public init(asset: DiskPath, source: SourceIdentity, spec: GridSpec, format: FormatChoice, quality: Int) {
        self.assetPath = asset
        self.source = source
        self.format = format
        rendition = Rendition(spec: spec, quality: quality, videoPoster: VideoFormats.isVideo(asset))
        // `|` cannot be confused: the path is last and every field before it is fixed-form. A
        // path that is not UTF-8 is written as NUL and its bytes percent-encoded: no path
        // contains NUL, so it cannot be mistaken for a UTF-8 name.
        let path = asset.string ?? "\u{0}" + PathEncoding.percentEncoded(asset.bytes)
        let canonical = rendition.keyText(format: format) + "|\(source.size)|\(source.modifiedNanoseconds)|\(path)"
        self.canonical = canonical
        let digest = Digest.hex128(canonical.utf8)
        self.digest = digest
        etag = "W/\"" + digest + "\""
    }

    /// The ETag (RFC 9110 §8.8.3): the digest, quoted, weak (`W/`): one key is one picture, not
    /// always the same bytes (a grid derived from a cached larger one, `derive_grids`; another
    /// libvips build), which is what a weak validator says (§8.8.1). `If-None-Match` compares
    /// weakly anyway (§13.1.2), and thumbnails take no `Range`. Built once, sent on every hit.
    public let etag: String

    /// Every field is in `canonical`, so it alone decides equality, compared as bytes (`String`
    /// equality would call NFC and NFD paths equal).
    public static func == (a: CacheKey, b: CacheKey) -> Bool { a === b || a.canonical.utf8.elementsEqual(b.canonical.utf8) }

    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}
