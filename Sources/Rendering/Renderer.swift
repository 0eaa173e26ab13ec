import CVipsShim

/// Turns source files into thumbnails with libvips (`vips_thumbnail` with shrink-on-load).
///
/// Blocking and thread-safe: call it from several render worker threads at once. Every call
/// ends with `vips_error_clear(); vips_thread_shutdown()` on the calling thread.
public struct Renderer: Sendable {
    /// zlib level for PNG output, 0...9; `6` (libvips' default) by default. Measured on the
    /// corpus' 2048x1536 RGBA PNG at grid 1: level 6 took 192 ms for 27 KB, level 3 180 ms for
    /// 44 KB, level 1 190 ms for 48 KB: decoding dominates, so the smaller file wins.
    public var pngCompression: Int = 6
    /// Where videos' poster frames are decoded (helper processes); `nil` by default: a video
    /// then gives `.unsupportedSource` (its header is still read, for the listing).
    public var videoPosters: VideoPosters?

    /// A renderer; `videoPosters` as the field of the same name.
    public init(videoPosters: VideoPosters? = nil) {
        self.videoPosters = videoPosters
    }

    /// Renders `request` (docs/API.md "grid" and "output"): orientation applied, sRGB 8-bit,
    /// exactly `spec.outputSize(sourceWidth:sourceHeight:)` of the displayed size, metadata
    /// stripped, alpha kept for PNG/WebP and flattened on white for JPEG. Animated and
    /// multi-page sources give page 0. A JPEG cut short gives what decodes, the rest grey, marked
    /// `degraded` (docs/API.md, "Thumbnails").
    /// - Throws: `RenderError`: `.sourceNotFound`, `.unsupportedSource` (also a JPEG of which
    ///   nothing decodes), `.sourceTooLarge`
    ///   (header says more than `maxPixels` for one page), `.sourceChanged` (the file opened is
    ///   not `expectedSource`, or changed while read), `.sourceUnreadable`, `.outOfDescriptors`
    ///   (no descriptor free to open or read it), `.internalFailure`.
    public func render(_ request: RenderRequest) throws(RenderError) -> Thumbnail {
        defer { cvips_job_end() }
        try Vips.start()

        let source = try SourceFile(path: request.source, resolved: request.expectedSource != nil)
        try source.check(request.expectedSource)
        if VideoFormats.isVideo(request.source) { return try renderVideo(request, source: source) }
        let info = try source.header()
        try Self.checkPixelLimit(info, maxPixels: request.maxPixels)

        let format = request.format ?? info.automaticFormat
        var options = renderOptions(request, info: info, format: format)

        var output = cvips_thumbnail()
        // Freed whatever the outcome: a failed render may have made its placeholder first.
        defer { cvips_thumbnail_free(&output) }
        var failure = cvips_failure()
        guard cvips_render(source.descriptor, &options, &output, &failure) == 0 else {
            throw RenderError(failure)
        }
        // Written to while it was decoded: the pixels may be of either version.
        try source.check(request.expectedSource)
        return Self.thumbnail(output, format: format)
    }

    /// The shim's output as a `Thumbnail` (bytes and placeholder copied out of libvips' memory).
    static func thumbnail(_ output: cvips_thumbnail, format: ImageFormat) -> Thumbnail {
        let bytes = [UInt8](UnsafeRawBufferPointer(start: output.bytes, count: output.length))
        let placeholder = output.placeholder.map { pixels in
            PlaceholderImage(width: Int(output.placeholder_width), height: Int(output.placeholder_height),
                             rgba: [UInt8](UnsafeRawBufferPointer(start: pixels, count: output.placeholder_length)),
                             microseconds: Int(output.placeholder_microseconds))
        }
        return Thumbnail(bytes: bytes, format: format,
                         width: Int(output.width), height: Int(output.height), placeholder: placeholder,
                         degraded: output.degraded != 0)
    }

    /// Renders `request`'s grid (a `cover` one) from `donor`, a larger thumbnail of the same
    /// source that thumbd made (so upright, sRGB, no metadata) and whose box has the same
    /// aspect ratio or holds the whole image: the same centre crop at `spec`'s exact size, with
    /// no decode of the original (a 236 px cell from a 393 px one: 7.4 ms against 41.9 ms from
    /// the 8–12 MP originals, `Tests/Benchmarks/derive.sh`). `request.source` is not read.
    /// - Throws: `.internalFailure` when the donor is not larger than the box or cannot be
    ///   decoded (the caller renders from the source instead).
    public func render(from donor: Thumbnail, _ request: RenderRequest) throws(RenderError) -> Thumbnail {
        defer { cvips_job_end() }
        try Vips.start()
        let spec = request.spec
        guard spec.fit == .cover, donor.width >= spec.width, donor.height >= spec.height else {
            throw RenderError(kind: .internalFailure, message: "the donor thumbnail is smaller than the grid")
        }
        let format = request.format ?? donor.format
        var options = cvips_render_options(
            width: Int32(spec.width), height: Int32(spec.height), crop: 1, format: format.shimFormat,
            quality: Int32(min(100, max(1, request.quality))),
            png_compression: Int32(min(9, max(0, pngCompression))), colour_transform: 0,
            placeholder_side: Int32(clamping: max(0, request.placeholderSide)), source_width: 0, source_height: 0)
        var output = cvips_thumbnail()
        defer { cvips_thumbnail_free(&output) }
        var failure = cvips_failure()
        let status = donor.bytes.withUnsafeBytes { cvips_render_encoded($0.baseAddress, $0.count, &options, &output, &failure) }
        guard status == 0 else { throw RenderError(failure) }
        return Self.thumbnail(output, format: format)
    }

    /// The shim's options for `request` of a source whose header is `info`, in `format`: the
    /// exact size of `info`'s displayed size at the request's grid, quality and PNG level clamped.
    func renderOptions(_ request: RenderRequest, info: SourceInfo, format: ImageFormat) -> cvips_render_options {
        let size = request.spec.outputSize(sourceWidth: info.displayWidth, sourceHeight: info.displayHeight)
        return cvips_render_options(
            width: Int32(size.width), height: Int32(size.height),
            crop: request.spec.fit == .cover ? 1 : 0,
            format: format.shimFormat,
            quality: Int32(min(100, max(1, request.quality))),
            png_compression: Int32(min(9, max(0, pngCompression))),
            colour_transform: info.needsColourTransform ? 1 : 0,
            placeholder_side: Int32(clamping: max(0, request.placeholderSide)),
            source_width: Int32(clamping: info.displayWidth), source_height: Int32(clamping: info.displayHeight))
    }

    /// Reads the header of the file at `path` without decoding pixels.
    /// - Throws: `.sourceNotFound`, `.unsupportedSource` (no readable header, empty, not a
    ///   regular file), `.outOfDescriptors`, `.internalFailure`.
    public func probe(path: String) throws(RenderError) -> SourceInfo {
        try probe(file: DiskPath(path))
    }

    /// Reads the header of the file at `file` (bytes, perhaps not UTF-8) without decoding pixels;
    /// of a video (`VideoFormats`), the container header, in this process, no decoder opened.
    /// - Throws: as `probe(path:)`.
    public func probe(file: DiskPath) throws(RenderError) -> SourceInfo {
        if VideoFormats.isVideo(file) { return try SourceFile(path: file).videoHeader() }
        defer { cvips_job_end() }
        try Vips.start()
        return try SourceFile(path: file).header()
    }

    /// Refuses a source whose one page has more than `maxPixels` px (`0`: no limit). Only page
    /// 0 is decoded, so a 100-frame GIF counts as one frame.
    static func checkPixelLimit(_ info: SourceInfo, maxPixels: Int) throws(RenderError) {
        guard maxPixels > 0, info.pixelCount > maxPixels else { return }
        throw RenderError(kind: .sourceTooLarge, message:
            "the source is \(info.width)x\(info.height) px (\(info.pixelCount) pixels), over the "
            + "limit of \(maxPixels) pixels")
    }
}

extension ImageFormat {
    /// The shim's enum for this format.
    var shimFormat: cvips_format {
        switch self {
        case .jpeg: CVIPS_FORMAT_JPEG
        case .png: CVIPS_FORMAT_PNG
        case .webp: CVIPS_FORMAT_WEBP
        }
    }
}
