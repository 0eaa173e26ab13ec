import Foundation
import Rendering
import Testing

/// What each file of `corpus/formats` gives: a thumbnail of a format, or an error kind.
enum FormatOutcome: Sendable, CustomStringConvertible {
    case rendered(ImageFormat)
    case refused(RenderError.Kind)

    var description: String {
        switch self {
        case .rendered(let format): "\(format)"
        case .refused(let kind): "\(kind)"
        }
    }
}

/// Every file in `corpus/formats` at every grid, against the table below; then the colour,
/// depth and frame rules one by one.
@Suite(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
struct CorpusFormatTests {
    let renderer = Renderer()

    /// The automatic format (docs/API.md "output"): PNG when libvips loads an alpha band (GIFs,
    /// APNG, RGBA PNG and WebP, animated WebP, the RGBA TIFF), JPEG otherwise.
    static let outcomes: [String: FormatOutcome] = [
        "apng-animated.png": .rendered(.png),
        "avif-irot-imir.avif": .rendered(.jpeg),
        "avif-portrait-p3-gps.avif": .rendered(.jpeg),
        "gif-animated-dispose-background.gif": .rendered(.png),
        "gif-animated-loop3.gif": .rendered(.png),
        "gif-static-photo.gif": .rendered(.png),    // 3 bands (no transparent index), but a GIF: PNG by docs/API.md
        "heic-iphone13-irot-and-exif-orientation6.heic": .rendered(.jpeg),
        "heic-iphone7-gps-p3.heic": .rendered(.jpeg),
        "heif-image-collection-4-images.heic": .rendered(.jpeg),
        "jpeg-adobe-rgb-icc.jpg": .rendered(.jpeg),
        "jpeg-arithmetic-coded.jpg": .rendered(.jpeg),
        "jpeg-cmyk-no-icc.jpg": .rendered(.jpeg),
        "jpeg-cmyk-swop-icc.jpg": .rendered(.jpeg),
        "jpeg-display-p3-icc-12mp.jpg": .rendered(.jpeg),
        "jpeg-grayscale-gray-icc.jpg": .rendered(.jpeg),
        "jpeg-lossless-sof3.jpg": .refused(.unsupportedSource),   // libjpeg-turbo 2.1: no SOF3
        "jpeg-ultrahdr-gainmap-4k.jpg": .rendered(.jpeg),
        "jpeg-xyb-icc.jpg": .rendered(.jpeg),
        "png-16bit-gray-alpha.png": .rendered(.png),
        "png-16bit-rgb-photo.png": .rendered(.jpeg),
        "png-display-p3-icc.png": .rendered(.png),
        "png-exif-orientation6.png": .rendered(.png),
        "png-gray-8bit.png": .rendered(.jpeg),
        "png-palette-8bit.png": .rendered(.jpeg),
        "png-palette-trns.png": .rendered(.png),
        "png-rgba-alpha-2048x1536.png": .rendered(.png),
        "png-rgba-interlaced-adam7.png": .rendered(.png),
        "tiff-cielab-16bit.tiff": .rendered(.jpeg),
        "tiff-multipage-fax-g3.tif": .rendered(.jpeg),
        "tiff-rgb.tiff": .rendered(.png),   // stored RGBA
        "webp-animated-lossy.webp": .rendered(.png),
        "webp-camera-10mp-exif-orientation6.webp": .rendered(.jpeg),
        "webp-lossless-alpha.webp": .rendered(.png),
        "webp-lossy.webp": .rendered(.jpeg),
    ]

    @Test func everyFileHasAnOutcome() {
        let files = TestFiles.corpusFiles("formats")
        #expect(Set(files) == Set(Self.outcomes.keys))
    }

    @Test(arguments: TestFiles.corpusFiles("formats"))
    func rendersAsTheTableSays(name: String) throws {
        let path = TestFiles.corpusPath("formats", name)
        let outcome = try #require(Self.outcomes[name], "\(name) is not in the table")

        switch outcome {
        case .refused(let kind):
            for spec in GridSpec.defaults {
                do {
                    let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: spec))
                    Issue.record("rendered as \(thumbnail.width)x\(thumbnail.height)")
                } catch {
                    #expect(error.kind == kind, "\(error)")
                }
            }
        case .rendered(let format):
            let display = try VipsCLI.displaySize(of: path)
            var thumbnails: [Thumbnail] = []
            for spec in GridSpec.defaults {
                let expected = expectedSize(spec, displayWidth: display.width,
                                            displayHeight: display.height)
                let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: spec))
                #expect(thumbnail.format == format)
                #expect((thumbnail.width, thumbnail.height) == expected, "grid \(spec.name)")
                #expect(Metadata.found(in: thumbnail.bytes).isEmpty, "grid \(spec.name)")
                thumbnails.append(thumbnail)
            }
            let decoded = try VipsCLI.summaries(ofEncoded: thumbnails.map(\.bytes))
            for (thumbnail, summary) in zip(thumbnails, decoded) {
                #expect(summary.loader == (format == .png ? "pngload" : "jpegload"))
                #expect((summary.width, summary.height) == (thumbnail.width, thumbnail.height))
                // PNG keeps alpha (4 bands); the one opaque source that gives PNG is a GIF without a
                // transparent index, which stays 3 bands.
                #expect(summary.bands == (format == .png && name != "gif-static-photo.gif" ? 4 : 3))
                #expect(summary.format == "uchar" && summary.interpretation == "srgb")
            }
        }
    }

    @Test func cmykBecomesThreeBandSRGB() throws {
        // The same picture with and without its SWOP profile; libvips' fallback CMYK profile
        // handles the second. Both must come out as the same sRGB picture.
        let tagged = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("formats", "jpeg-cmyk-swop-icc.jpg"), spec: .grid("5")))
        let untagged = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("formats", "jpeg-cmyk-no-icc.jpg"), spec: .grid("5")))
        for thumbnail in [tagged, untagged] {
            let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
            #expect(decoded.bands == 3 && decoded.interpretation == "srgb")
        }
        #expect(try VipsCLI.meanAbsoluteDifference(tagged.bytes, untagged.bytes) < 8)
    }

    @Test func sixteenBitAndXYBMatchTheEightBitOriginal() throws {
        // libvips' sample.png in three encodings: 8-bit palette, 16-bit RGB, and XYB JPEG
        // (green cast unless its ICC profile is applied with perceptual intent).
        let palette = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("formats", "png-palette-8bit.png"), spec: .grid("5")))
        for name in ["png-16bit-rgb-photo.png", "jpeg-xyb-icc.jpg"] {
            let thumbnail = try renderer.render(RenderRequest(
                sourcePath: TestFiles.corpusPath("formats", name), spec: .grid("5")))
            #expect(try VipsCLI.header(ofEncoded: thumbnail.bytes).format == "uchar")
            let difference = try VipsCLI.meanAbsoluteDifference(thumbnail.bytes, palette.bytes)
            #expect(difference < 8, "\(name): mean |Δ| \(difference) from the 8-bit original")
        }
    }

    @Test func sixteenBitGreyAlphaBecomesEightBitRGBA() throws {
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("formats", "png-16bit-gray-alpha.png"), spec: .grid("3")))
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.format == "uchar" && decoded.bands == 4 && decoded.interpretation == "srgb")
    }

    @Test(arguments: ["gif-animated-loop3.gif", "gif-animated-dispose-background.gif",
                      "webp-animated-lossy.webp", "apng-animated.png"])
    func animationGivesTheFirstFrameAsAStill(name: String) throws {
        let path = TestFiles.corpusPath("formats", name)
        let frame = try VipsCLI.displaySize(of: path)   // page 0, as vipsheader reads it
        let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("1")))
        #expect((thumbnail.width, thumbnail.height) == (frame.width, frame.height))
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.pages ?? 1 == 1)
        #expect(!decoded.fields.contains("page-height") && !decoded.fields.contains("delay"))
    }

    @Test func heicWithIrotAndExifOrientationRotatesOnce() throws {
        // Stored 3024x4032 after libheif's irot; EXIF still says 6. Displayed portrait.
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("formats", "heic-iphone13-irot-and-exif-orientation6.heic"),
            spec: .grid("1")))
        #expect((thumbnail.width, thumbnail.height) == (1179, 1572))
    }
}

/// Every file of `corpus/broken` is refused but the cut JPEG: 422 for the PNG bomb (pixel limit,
/// from the header), 415 for the rest. The 44-byte GIF bomb never reaches the limit: libvips' GIF
/// loader finds no frame in it and fails first, so it is 415. `truncated-10000-bytes.jpg` (a
/// valid header, then the first rows) renders degraded; `camera-jpeg-corrupt-scan-data.jpg`
/// fails at libvips' `fail_on=none` too (`vips thumbnail` refuses it), so it stays 415.
@Suite(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
struct CorpusBrokenTests {
    let renderer = Renderer()

    static let outcomes: [String: RenderError.Kind] = [
        "bomb-gif-tiny-file-huge-frame.gif": .unsupportedSource,
        "bomb-png-65536x65536.png": .sourceTooLarge,
        "camera-jpeg-corrupt-scan-data.jpg": .unsupportedSource,
        "empty.jpg": .unsupportedSource,
        "gif-truncated.gif": .unsupportedSource,
        "heif-item-without-data.heif": .unsupportedSource,
        "html-error-page.jpg": .unsupportedSource,
        "jpeg-corrupt-header.jpg": .unsupportedSource,
        "png-bad-idat-crc.png": .unsupportedSource,
        "png-bad-signature.png": .unsupportedSource,
    ]
    /// Rendered of what decodes, the rest grey (docs/API.md "Thumbnails").
    static let degraded: Set<String> = ["truncated-10000-bytes.jpg"]

    @Test func everyFileHasAnOutcome() {
        #expect(Set(TestFiles.corpusFiles("broken")) == Set(Self.outcomes.keys).union(Self.degraded))
    }

    @Test(arguments: Self.degraded.sorted())
    func isRenderedDegraded(name: String) throws {
        // 2725x2225: grid 1 (contain) 1179 * 2225 / 2725 = 962.7, so 1179x963; 3 and 5 the box.
        let sizes = ["1": (1179, 963), "3": (393, 393), "5": (236, 236)]
        for spec in GridSpec.defaults {
            let thumbnail = try renderer.render(RenderRequest(sourcePath: TestFiles.corpusPath("broken", name), spec: spec))
            #expect(thumbnail.degraded)
            #expect((thumbnail.width, thumbnail.height) == sizes[spec.name]!, "\(spec.name)")
        }
    }

    @Test(arguments: TestFiles.corpusFiles("broken").filter { !Self.degraded.contains($0) })
    func isRefused(name: String) throws {
        let expected = try #require(Self.outcomes[name], "\(name) is not in the table")
        for spec in GridSpec.defaults {
            let start = Date()
            do {
                let thumbnail = try renderer.render(RenderRequest(
                    sourcePath: TestFiles.corpusPath("broken", name), spec: spec))
                Issue.record("\(name) rendered as \(thumbnail.width)x\(thumbnail.height)")
            } catch {
                #expect(error.kind == expected, "\(error)")
                #expect(!error.message.isEmpty)
            }
            #expect(Date().timeIntervalSince(start) < 2, "refusing \(name) took too long")
        }
    }

    @Test func bombIsJudgedFromTheHeader() throws {
        let path = TestFiles.corpusPath("broken", "bomb-png-65536x65536.png")
        let info = try renderer.probe(path: path)
        #expect((info.width, info.height) == (65536, 65536))
        do {
            _ = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("5")))
            Issue.record("rendered the bomb")
        } catch {
            #expect(error.kind == .sourceTooLarge)
            #expect(error.message.contains("65536x65536") && error.message.contains("100000000"))
        }
    }
}
