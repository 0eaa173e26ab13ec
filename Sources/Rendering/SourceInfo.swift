import CVipsShim

/// Header facts of a source, read without decoding pixels (libvips header with sequential
/// access).
public struct SourceInfo: Sendable, Equatable {
    /// Width as stored in the file, px (page 0 of a multi-page file). HEIF/AVIF report the size
    /// after their irot/imir boxes, as libvips does.
    public var width: Int
    /// Height as stored in the file, px (page 0 of a multi-page file).
    public var height: Int
    /// EXIF orientation 1...8; 1 when absent or invalid (e.g. 0).
    public var orientation: Int
    /// Width as displayed, after orientation, px.
    public var displayWidth: Int
    /// Height as displayed, after orientation (5...8 swap the sides), px.
    public var displayHeight: Int
    /// Pages or frames (`n-pages`), 1 when absent. Only page 0 is ever rendered.
    public var pages: Int
    /// Whether libvips loads an alpha band (GIFs always do).
    public var hasAlpha: Bool
    /// The libvips loader, e.g. `"jpegload"`; `"magickload"` for BMP, ICO and TGA, which are
    /// read through ImageMagick (README "Formats").
    public var loader: String
    /// EXIF DateTimeOriginal, raw text `"YYYY:MM:DD HH:MM:SS"`, when present and not blank
    /// (some cameras write spaces and colons only).
    public var dateTimeOriginal: String?
    /// EXIF OffsetTimeOriginal, e.g. `"+09:00"`, when present and not blank.
    public var offsetTimeOriginal: String?
    /// Whether making sRGB needs an ICC transform: the source embeds a profile other than HP's
    /// sRGB IEC61966-2.1 (imgproxy's rule: cvips_header.c), or is in a space other than sRGB or
    /// grey (CMYK, LAB, ...). Plain sRGB skips it (its cost: docs/performance.md).
    public var needsColourTransform: Bool
    /// A video's duration from its container header, ms (0 when the container does not say);
    /// nil for a photo. `loader` then starts `"ffmpeg:"` (README "Videos").
    public var durationMilliseconds: Int?

    public init(width: Int, height: Int, orientation: Int, pages: Int, hasAlpha: Bool,
                loader: String, dateTimeOriginal: String? = nil,
                offsetTimeOriginal: String? = nil, needsColourTransform: Bool = true) {
        self.width = width
        self.height = height
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        let swapped = self.orientation >= 5
        self.displayWidth = swapped ? height : width
        self.displayHeight = swapped ? width : height
        self.pages = max(1, pages)
        self.hasAlpha = hasAlpha
        self.loader = loader
        self.dateTimeOriginal = dateTimeOriginal
        self.offsetTimeOriginal = offsetTimeOriginal
        self.needsColourTransform = needsColourTransform
    }

    /// Whether this is a video's header (`durationMilliseconds` set).
    public var isVideo: Bool { durationMilliseconds != nil }

    /// Pixels libvips decodes for a render: one page, `width * height`.
    public var pixelCount: Int { width * height }

    /// From the shim's header struct.
    init(_ header: cvips_header) {
        var header = header
        let loader = withUnsafeBytes(of: &header.loader) { String(cBytes: $0) }
        let taken = withUnsafeBytes(of: &header.date_time_original) { String(cBytes: $0) }
        let offset = withUnsafeBytes(of: &header.offset_time_original) { String(cBytes: $0) }
        self.init(width: Int(header.width), height: Int(header.height),
                  orientation: Int(header.orientation), pages: Int(header.pages),
                  hasAlpha: header.has_alpha != 0, loader: loader,
                  dateTimeOriginal: Self.exifText(taken), offsetTimeOriginal: Self.exifText(offset),
                  needsColourTransform: header.needs_colour_transform != 0)
    }

    /// Trimmed EXIF text, or `nil` when it holds no digit (absent, or blank like
    /// `"    :  :     :  :  "`).
    private static func exifText(_ text: String) -> String? {
        let trimmed = text.trimmingSpaces()
        return trimmed.contains(where: \.isNumber) ? trimmed : nil
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and NULs (EXIF ASCII padding).
    fileprivate func trimmingSpaces() -> String {
        let padding: Set<Character> = [" ", "\t", "\0"]
        guard let first = firstIndex(where: { !padding.contains($0) }),
              let last = lastIndex(where: { !padding.contains($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension SourceInfo {
    /// The output format when the request does not force one (docs/API.md, "output"): PNG for sources
    /// with alpha and for every GIF (the contract treats GIFs as having alpha; libvips 8.14 loads
    /// a GIF without a transparent index as 3 bands), JPEG otherwise.
    public var automaticFormat: ImageFormat {
        hasAlpha || loader == "gifload" ? .png : .jpeg
    }
}
