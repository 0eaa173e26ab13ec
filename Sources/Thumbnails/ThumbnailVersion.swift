import CXXHash
import Rendering

/// The `v` of a versioned thumbnail URL, `/thumbnails/{grid}/{asset path}?v={token}`: 16
/// lower-case hex characters of XXH3-64 over what, besides the asset path (in the URL already)
/// and the format (chosen per request, under `Vary: Accept`), decides a thumbnail's pixels: the
/// `Rendition` (pipeline version, grid spec, quality) and the source's identity (size and
/// mtime in ns). `/assets` computes it from the index's stored size and mtime, a `GET` from the
/// identity its path resolves to (once per memoised URL): both agree while the file is
/// unchanged, and a replaced file, a changed grid spec or quality, or a new pipeline give a new
/// token, hence a new URL. A token is never a cache-key field: it picks headers, not bytes.
public struct ThumbnailVersion: Sendable {
    /// XXH3-64 seed from the spec, quality and pipeline version, so a token hashes 16 bytes.
    private let seed: UInt64

    public init(_ rendition: Rendition) {
        seed = Array(rendition.tokenText.utf8).withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count) }
    }

    /// `videoPoster`: the tokens of videos' posters (`Rendition.videoPoster`); false by default.
    public init(spec: GridSpec, quality: Int, videoPoster: Bool = false) {
        self.init(Rendition(spec: spec, quality: quality, videoPoster: videoPoster))
    }

    /// The token of a thumbnail of `source` under this spec and quality.
    public func token(for source: SourceIdentity) -> String {
        var fields = (Int64(source.size).littleEndian, source.modifiedNanoseconds.littleEndian)
        let hash = withUnsafeBytes(of: &fields) { XXH3_64bits_withSeed($0.baseAddress, $0.count, seed) }
        return Digest.hexString(hash)
    }

    /// The token of the thumbnail `key` names (its source, spec and quality; not its path or format).
    public static func token(for key: CacheKey) -> String {
        ThumbnailVersion(key.rendition).token(for: key.source)
    }
}
