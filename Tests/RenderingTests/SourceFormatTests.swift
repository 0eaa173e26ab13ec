import Foundation
import Rendering
import Testing

/// The one list of formats thumbd reads (README "Formats", `cvips_formats.c`): the header read
/// the listing takes and the render agree on every file, BMP and ICO included (once listed and
/// never rendered), and what is not on the list (PDF, SVG, TGA) is read by neither.
@Suite struct SourceFormatTests {
    let renderer = Renderer()

    /// A render of `path` by `vipsthumbnail`, which reads these formats by file name through
    /// ImageMagick (`magickload`): `size` px, centre crop, as PNG or as JPEG at quality 80 (as
    /// thumbd encodes; LIBVIPS.md's reference command). Not rotated: neither format carries
    /// EXIF, and an orientation ImageMagick sets of its own is not one.
    func reference(_ path: String, size: Int, png: Bool) throws -> [UInt8] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent(png ? "reference.png" : "reference.jpg").path
        let made = try VipsCLI.run("vipsthumbnail", [path, "-s", "\(size)x\(size)", "--smartcrop", "centre", "--no-rotate",
                                                     "-o", output + (png ? "" : "[Q=80,strip]")])
        try #require(made != nil, "vipsthumbnail could not read \(path)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    @Test(arguments: [("bmp-24bit-64x48.bmp", false), ("ico-32bit-alpha-64x48.ico", true)])
    func imageMagicksFormatsAreProbedAndRenderedAlike(name: String, alpha: Bool) throws {
        let path = TestFiles.fixture(name)
        let info = try renderer.probe(path: path)
        #expect((info.width, info.height) == (64, 48))
        #expect(info.width == (try VipsCLI.intField("width", of: path)))
        #expect(info.loader == "magickload")
        #expect(info.hasAlpha == alpha)
        #expect(info.orientation == 1)   // upright as read
        // 64x48 fits grid 1's box (kept); it is shorter than grid 3's and 5's: a 48 px square.
        for (grid, size) in [("1", (64, 48)), ("3", (48, 48)), ("5", (48, 48))] {
            let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid(grid)))
            #expect(thumbnail.format == (alpha ? .png : .jpeg), "\(name) grid \(grid)")
            #expect((thumbnail.width, thumbnail.height) == size, "\(name) grid \(grid)")
            let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
            #expect((decoded.width, decoded.height) == size)
            #expect(decoded.bands == (alpha ? 4 : 3))
        }
        let five = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("5")))
        let difference = try VipsCLI.meanAbsoluteDifference(five.bytes, try reference(path, size: 48, png: alpha))
        #expect(difference < 1, "mean |Δ| \(difference) of 255 against vipsthumbnail's render")
    }

    /// Documents and drawings that libvips could read (vipsheader does) but a photo library does
    /// not list: neither probed nor rendered, with the same 415 kind and sentence.
    @Test(arguments: [("svg-drawing-40x30.svg", "svgload"), ("pdf-one-page-60x40.pdf", "pdfload")])
    func documentsAndDrawingsAreReadByNeither(name: String, loader: String) throws {
        let path = TestFiles.fixture(name)
        #expect(try VipsCLI.field("vips-loader", of: path) == loader)   // a valid file of its kind
        let message = "the source is in a format thumbd does not read (libvips \(loader)_source; see docs/thumbnails.md \"Formats\")"
        #expect(throws: RenderError(kind: .unsupportedSource, message: message)) { try renderer.probe(path: path) }
        #expect(throws: RenderError(kind: .unsupportedSource, message: message)) {
            try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
        }
    }

    /// TGA is not read: this ImageMagick turned TGA 2.0's usual bottom-up files upside down and
    /// greyscale ones half transparent (a fresh-eyes session's files, written by the spec). A
    /// valid TGA (vipsheader reads it) is neither probed nor rendered.
    @Test func aTGAIsReadByNeither() throws {
        let path = TestFiles.fixture("tga-24bit-64x48.tga")
        #expect(try VipsCLI.intField("width", of: path) == 64)   // a valid file of its kind
        let message = "the source is not in a format thumbd reads (see docs/thumbnails.md \"Formats\"): VipsForeignLoad: source is not "
            + "in a known format"
        #expect(throws: RenderError(kind: .unsupportedSource, message: message)) { try renderer.probe(path: path) }
        #expect(throws: RenderError(kind: .unsupportedSource, message: message)) {
            try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
        }
    }

    /// A small file whose BMP or TGA header declares a huge image is not taken for that format,
    /// so ImageMagick (which decodes the whole image even for a header) never allocates it.
    @Test func aSmallFileDeclaringAHugeBMPOrTGAIsNotHandedToImageMagick() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        // BITMAPINFOHEADER, 30000 x 30000 x 24 bits, uncompressed, in 1 KiB.
        var bmp: [UInt8] = Array("BM".utf8) + le32(1024) + le32(0) + le32(54)
        bmp += le32(40) + le32(30000) + le32(30000) + le16(1) + le16(24) + le32(0) + le32(0)
        bmp += le32(2835) + le32(2835) + le32(0) + le32(0)
        bmp += [UInt8](repeating: 0x80, count: 1024 - bmp.count)
        // TGA, true-colour, 30000 x 30000 x 24 bits, uncompressed, in 1 KiB.
        var tga: [UInt8] = [0, 0, 2] + [0, 0, 0, 0, 0] + le16(0) + le16(0) + le16(30000) + le16(30000) + [24, 0]
        tga += [UInt8](repeating: 0x80, count: 1024 - tga.count)
        for (name, bytes) in [("huge.bmp", bmp), ("huge.tga", tga)] {
            let path = directory.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let message = "the source is not in a format thumbd reads (see docs/thumbnails.md \"Formats\"): VipsForeignLoad: source is not "
                + "in a known format"
            #expect(throws: RenderError(kind: .unsupportedSource, message: message), "\(name)") { try renderer.probe(path: path) }
        }
    }
}
