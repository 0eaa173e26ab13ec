import Dispatch
import Foundation
import Library
import Rendering
import Synchronization

/// The render step of a miss: libvips (or a derived grid, `ThumbnailPipeline+Derivation`) for
/// one request on a render worker, timed and counted, its placeholder handed to `placeholders`.
extension ThumbnailPipeline {
    /// libvips work for one request, timed and counted. Checks the byte limit first (photos
    /// only: a video's poster reads its header and a few keyframes, whatever its size).
    func renderNow(_ request: ThumbnailRequest, prefetch: Bool) -> Result<ThumbnailResult, ThumbnailError> {
        let limit = configuration.maxSourceBytes
        if limit > 0, request.key.source.size > limit, !VideoFormats.isVideo(request.source) {
            // A failed render that never reaches libvips: counted, so each disk miss is still
            // one render (or one refusal) in /stats.
            renderStatistics.recordRender(milliseconds: 0, failed: true, prefetch: prefetch)
            return .failure(.render(RenderError(kind: .sourceTooLarge,
                message: "the source is \(request.key.source.size) bytes, over the limit of \(limit) bytes")))
        }
        let started = clock.now()
        var renderRequest = RenderRequest(source: request.source, spec: request.key.spec,
                                          format: request.key.format.format, quality: request.key.quality,
                                          maxPixels: configuration.maxSourcePixels,
                                          expectedSource: request.key.source)
        renderRequest.placeholderSide = placeholders.side(for: request.key)
        // From a cached larger grid when one gives the same picture, with no placeholder (the
        // donor holds its own box, and a placeholder is of the whole photo: a later render of
        // the source or the backfill makes it); from the source otherwise (also when that
        // fails: the donor is only ever a shortcut).
        var derived: Thumbnail?
        if let donor = derivationDonor(for: request.key) {
            var fromDonor = renderRequest
            fromDonor.placeholderSide = 0
            do { derived = try renderer.render(from: donor, fromDonor) } catch { renderStatistics.recordDeriveFallback() }
        }
        let result = derived.map { .success($0) } ?? Result { () throws(RenderError) in try renderer.render(renderRequest) }
        let milliseconds = Double(clock.now() &- started) / 1e6
        switch result {
        case .success(let thumbnail):
            renderStatistics.recordRender(milliseconds: milliseconds, failed: false, prefetch: prefetch, derived: derived != nil,
                                          degraded: thumbnail.degraded)
            // Hashed here, on the render worker (its cost: docs/performance.md), before the
            // waiters are answered: the listing shows it from its publication on, within
            // `LibraryIndex.placeholderPublicationNanoseconds` of this.
            placeholders.take(thumbnail.placeholder, for: request.key.assetPath, source: request.key.source, from: .render)
            // Without its placeholder's pixels, which no cache is to hold.
            let thumbnail = Thumbnail(bytes: thumbnail.bytes, format: thumbnail.format, width: thumbnail.width, height: thumbnail.height)
            return .success(ThumbnailResult(thumbnail: thumbnail, tier: .miss, renderMilliseconds: milliseconds))
        case .failure(let error):
            renderStatistics.recordRender(milliseconds: milliseconds, failed: true, prefetch: prefetch)
            if error.kind == .unsupportedSource || error.kind == .sourceTooLarge {   // the photo itself, any grid (415, 422)
                placeholders.noteUnrenderable(request.key.assetPath, source: request.key.source)
            }
            return .failure(.render(error))
        }
    }
}
