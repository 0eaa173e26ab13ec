import Rendering

/// A grid rendered from a cached larger grid of the same source instead of from the source:
/// switching a scrolled library from 3 columns to 5 wants, for most cells on screen, a smaller
/// thumbnail of a photo whose grid-3 thumbnail was just made. A render from that 393 px JPEG took
/// 7.4 ms, from the 8–12 MP original 41.9 ms (`Tests/Benchmarks/derive.sh`, a loaded machine).
///
/// The rule, the same for clients and prefetch: a `cover` grid is derived when the memory or
/// disk tier holds, for the same asset, source identity, format choice and quality, a thumbnail
/// of another grid that gives exactly the same picture, only larger: a `cover` grid of the same
/// aspect ratio and a larger box, made at its full box (the source was not smaller than it); or
/// a `contain` grid (the whole image) at least as large as the box on both axes. The smallest
/// such donor is used. A `contain` grid is never derived (its exact size is the source's
/// aspect; a donor's is rounded). The result differs from a render of the original by a second
/// resampling and JPEG generation (PSNR measured by the tests and `derive.sh`), so the
/// thumbnail ETag is weak (`CacheKey.etag`). Off with `derive_grids: false`.
extension ThumbnailPipeline {
    /// A cached thumbnail `key`'s grid can be derived from (the rule above), or nil. Looks at
    /// memory, then disk (a blocking read: call it on a render worker); counts nothing.
    func derivationDonor(for key: CacheKey) -> Thumbnail? {
        guard configuration.deriveGrids, key.spec.fit == .cover else { return nil }
        let target = key.spec
        let candidates = configuration.grids
            .filter { (spec: GridSpec) -> Bool in spec != target && Self.couldGive(target, from: spec) }
            .sorted { (a: GridSpec, b: GridSpec) -> Bool in a.width * a.height < b.width * b.height }
        for spec in candidates {
            let donorKey = CacheKey(asset: key.assetPath, source: key.source, spec: spec, format: key.format, quality: key.quality)
            guard let donor = memory.peek(donorKey.digest)?.withBytes() ?? disk.peek(donorKey) else { continue }
            if Self.gives(key.spec, from: spec, donor: donor) { return donor }
        }
        return nil
    }

    /// Whether a thumbnail of grid `spec` may give `target` (a cover grid), judged from the
    /// specs alone: a larger cover box of the same aspect ratio, or a contain box larger on both axes.
    static func couldGive(_ target: GridSpec, from spec: GridSpec) -> Bool {
        switch spec.fit {
        case .cover:
            return spec.width * target.height == spec.height * target.width && spec.width > target.width
        case .contain:
            return spec.width >= target.width && spec.height >= target.height
        }
    }

    /// Whether `donor`, a thumbnail of grid `spec`, gives `target`: a cover donor made at its
    /// full box (so its source filled it), a contain donor at least `target`'s box on both axes.
    static func gives(_ target: GridSpec, from spec: GridSpec, donor: Thumbnail) -> Bool {
        guard couldGive(target, from: spec) else { return false }
        switch spec.fit {
        case .cover: return donor.width == spec.width && donor.height == spec.height
        case .contain: return donor.width >= target.width && donor.height >= target.height
        }
    }
}
