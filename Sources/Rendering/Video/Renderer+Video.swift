import CVideoShim
import CVipsShim

extension Renderer {
    /// A video's thumbnail: the poster frame decoded in a helper (`videoPosters`), then handed
    /// to libvips as RGB (`cvips_render_pixels`) with the display rotation as its orientation,
    /// so size, sRGB, stripping and encoding are the photo's. JPEG unless the request forces a
    /// format (a frame has no alpha).
    /// - Throws: as `render(_:)`, and `.decodeTimeout`.
    func renderVideo(_ request: RenderRequest, source: borrowing SourceFile) throws(RenderError) -> Thumbnail {
        guard let videoPosters else {
            throw RenderError(kind: .unsupportedSource, message: "videos are not decoded by this server (no video helper)")
        }
        let frame = try videoPosters.poster(descriptor: source.descriptor, maxPixels: request.maxPixels)
        let info = SourceInfo(width: frame.width, height: frame.height, orientation: frame.orientation, pages: 1,
                              hasAlpha: false, loader: "ffmpeg", needsColourTransform: false)
        let format = request.format ?? .jpeg
        var options = renderOptions(request, info: info, format: format)
        var output = cvips_thumbnail()
        // Freed whatever the outcome: a failed render may have made its placeholder first.
        defer { cvips_thumbnail_free(&output) }
        var failure = cvips_failure()
        guard cvips_render_pixels(frame.frame.pixels, frame.frame.length, frame.frame.width, frame.frame.height,
                                  Int32(info.orientation), &options, &output, &failure) == 0 else {
            throw RenderError(failure)
        }
        // Written to while it was decoded: the frame may be of either version.
        try source.check(request.expectedSource)
        return Self.thumbnail(output, format: format)   // with its placeholder, when asked
    }
}

extension SourceFile {
    /// A video's container header (demuxer only: no decoder opens in this process), within
    /// 5 s (libav's interrupt callback).
    /// - Throws: `.unsupportedSource` (not a container read here, no video stream, or a header
    ///   that takes over 5 s to read from a local file: taken for hostile, so that the listing
    ///   remembers it until it changes instead of stalling every scan on it).
    func videoHeader() throws(RenderError) -> SourceInfo {
        var limits = cvideo_limits(max_pixels: 0, timeout_ms: 5000)
        var header = cvideo_header()
        var failure = cvideo_failure()
        guard cvideo_probe(descriptor, &limits, &header, &failure) == 0 else {
            var error = RenderError(failure)
            if error.kind == .decodeTimeout { error.kind = .unsupportedSource }
            throw error
        }
        return SourceInfo(video: header)
    }
}
