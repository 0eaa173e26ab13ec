import CVipsShim

/// What a source's embedded preview gives (`Renderer.embeddedPreview(file:side:expected:)`): the
/// EXIF thumbnail of a JPEG (IFD1, read with libexif) or the thumbnail item of a HEIF, a few KB
/// the camera made beside the photo, read without decoding the photo (issue 28).
public enum EmbeddedPreview: Sendable, Equatable {
    /// None: no EXIF thumbnail or thumbnail item, another format, or one that does not decode or
    /// declares more than 1024 px a side.
    case absent
    /// One whose shape, after the photo's EXIF orientation, is not the photo's (an editor that
    /// crops or resizes often keeps the old preview): not trusted. Sizes in px, as shown.
    case mismatched(preview: (width: Int, height: Int), photo: (width: Int, height: Int))
    /// A trusted one: its placeholder image, upright, at most `side` px a side.
    case placeholder(PlaceholderImage)

    public static func == (a: EmbeddedPreview, b: EmbeddedPreview) -> Bool {
        switch (a, b) {
        case (.absent, .absent): true
        case let (.mismatched(p, q), .mismatched(r, s)): p == r && q == s
        case let (.placeholder(x), .placeholder(y)): x == y
        default: false
        }
    }
}

extension Renderer {
    /// The placeholder image of `file`'s embedded preview (`cvips_preview_read`): trusted only
    /// when its shape after the photo's orientation is the photo's, each side within 1 px of
    /// the photo's shape scaled to the other side (a downscale's rounding). Reads the header
    /// and the preview's few KB; the photo is not decoded. A video gives `.absent`.
    /// - Parameters:
    ///   - side: the largest side of the placeholder image, px (`ThumbHash`'s 100).
    ///   - expected: the identity the file must have (`fstat` on the open descriptor, before and
    ///     after the read); nil: any.
    /// - Throws: as `probe(file:)` (the file cannot be opened, or is not an image), and
    ///   `.sourceChanged` when the open file is not `expected`.
    public func embeddedPreview(file: DiskPath, side: Int, expected: SourceIdentity? = nil) throws(RenderError) -> EmbeddedPreview {
        if VideoFormats.isVideo(file) { return .absent }
        defer { cvips_job_end() }
        try Vips.start()
        let source = try SourceFile(path: file)
        try source.check(expected)
        var preview = cvips_preview()
        var failure = cvips_failure()
        guard cvips_preview_read(source.descriptor, Int32(clamping: side), &preview, &failure) == 0 else {
            throw RenderError(failure)
        }
        defer { cvips_thumbnail_free(&preview.image) }
        try source.check(expected)   // again: not changed while it was read
        switch preview.status {
        case CVIPS_PREVIEW_MISMATCHED:
            return .mismatched(preview: (Int(preview.preview_width), Int(preview.preview_height)),
                               photo: (Int(preview.photo_width), Int(preview.photo_height)))
        case CVIPS_PREVIEW_MADE:
            guard let pixels = preview.image.placeholder else { return .absent }
            return .placeholder(PlaceholderImage(
                width: Int(preview.image.placeholder_width), height: Int(preview.image.placeholder_height),
                rgba: [UInt8](UnsafeRawBufferPointer(start: pixels, count: preview.image.placeholder_length)),
                microseconds: Int(preview.image.placeholder_microseconds)))
        default:
            return .absent
        }
    }
}
