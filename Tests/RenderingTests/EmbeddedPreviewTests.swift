import Foundation
import Rendering
import Testing
import TestSupport

/// A source's embedded preview (`Renderer.embeddedPreview`): trusted only when its shape after the
/// photo's orientation is the photo's; its placeholder image judged against the preview taken out
/// of the file independently (the JPEG's APP1 bytes cut here by hand; `vips copy file[thumbnail]`
/// for a HEIF), turned by `vips rot` and shrunk by `vips shrink --ceil` by the least whole factor
/// that fits it in 100x100 (cvips_placeholder.c).
@Suite struct EmbeddedPreviewTests {
    let renderer = Renderer()

    /// `preview` (a file libvips reads) turned by `rotation` (`vips rot`: d90 clockwise...) and
    /// shrunk by a box filter of `factor` on both axes, sides rounded up, as raw RGB bytes.
    static func reference(_ preview: String, rotation: String?, factor: Int) throws -> [UInt8] {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var input = preview
        if let rotation {
            let turned = directory.appendingPathComponent("turned.v").path
            _ = try VipsCLI.run("vips", ["rot", input, turned, rotation])
            input = turned
        }
        let small = directory.appendingPathComponent("small.v").path, raw = directory.appendingPathComponent("small.raw").path
        _ = try VipsCLI.run("vips", ["shrink", input, small, String(factor), String(factor), "--ceil"])
        _ = try VipsCLI.run("vips", ["rawsave", small, raw])
        return [UInt8](FileManager.default.contents(atPath: raw) ?? Data())
    }

    /// The largest difference of a channel between `image` (RGBA) and `reference` (RGB), levels.
    static func largestDifference(_ image: PlaceholderImage, _ reference: [UInt8]) -> Int {
        guard reference.count == image.width * image.height * 3 else { return 255 }
        var largest = 0
        for pixel in 0..<(image.width * image.height) {
            for band in 0..<3 { largest = max(largest, abs(Int(image.rgba[pixel * 4 + band]) - Int(reference[pixel * 3 + band]))) }
        }
        return largest
    }

    func placeholder(_ path: String) throws -> PlaceholderImage {
        let preview = try renderer.embeddedPreview(file: DiskPath(path), side: 100)
        guard case .placeholder(let image) = preview else {
            throw VipsCLI.Failure(description: "\(path): \(preview), not a placeholder")
        }
        return image
    }

    @Test(arguments: [
        // name, `vips rot` that shows its EXIF thumbnail upright, the placeholder's size: the
        // least whole factor that fits 100x100 is ceil(160 / 100) = 2
        ("galaxy-s-orientation6-gps-vga.jpg", "d90", 60, 80),    // 640x480 o6 shows 480x640; 160x120 shows 120x160
        ("coolpix-p6000-gps.jpg", nil, 80, 60),                   // 640x480; 160x120
    ] as [(String, String?, Int, Int)])
    func aFixturePhotosPreviewUprightWithinOneHundredPixels(name: String, rotation: String?, width: Int, height: Int) throws {
        let path = TestFiles.fixture(name)
        guard FileManager.default.fileExists(atPath: path) || TestFiles.hasCorpus else { return }
        let source = FileManager.default.fileExists(atPath: path) ? path : TestFiles.corpusPath("photos", name)
        let image = try placeholder(source)
        #expect((image.width, image.height) == (width, height))
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let thumbnail = directory.appendingPathComponent("thumbnail.jpg").path
        try Data(try ExifThumbnail.bytes(ofJPEG: source)).write(to: URL(fileURLWithPath: thumbnail))
        let reference = try Self.reference(thumbnail, rotation: rotation, factor: 2)
        // The same decode (libjpeg), the same box filter: at most a level of rounding apart.
        #expect(Self.largestDifference(image, reference) <= 1)
    }

    @Test func corpusPhonePhotosPreviewsUpright() throws {
        guard TestFiles.hasCorpus else { return }
        for (name, rotation, factor, width, height) in [
            ("iphone5-orientation3-gps.jpg", "d180", 2, 80, 60),   // 3264x2448 o3; 160x120 turned over, by 2
            ("google-pixel-12mp-gps.jpg", nil, 3, 85, 63),         // 4048x3036; 253x189 by 3: 84.3 -> 85, 63
            ("canon-a85-orientation8.jpg", "d270", 2, 80, 60),     // 1704x2272 o8 shows 2272x1704; 120x160 shows 160x120
        ] as [(String, String?, Int, Int, Int)] {
            let source = TestFiles.corpusPath("photos", name)
            let image = try placeholder(source)
            #expect((image.width, image.height) == (width, height), "\(name)")
            let directory = try TestFiles.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let thumbnail = directory.appendingPathComponent("thumbnail.jpg").path
            try Data(try ExifThumbnail.bytes(ofJPEG: source)).write(to: URL(fileURLWithPath: thumbnail))
            let reference = try Self.reference(thumbnail, rotation: rotation, factor: factor)
            #expect(Self.largestDifference(image, reference) <= 1, "\(name)")
        }
    }

    @Test func aHEIFsThumbnailItem() throws {
        guard TestFiles.hasCorpus else { return }
        // 4032x3024 with a 320x240 thumbnail (by 4: 80x60); the iPhone 13's has irot, applied to
        // both by libheif.
        for (name, width, height) in [("heic-iphone7-gps-p3.heic", 80, 60), ("heic-iphone13-irot-and-exif-orientation6.heic", 60, 80)] {
            let source = TestFiles.corpusPath("formats", name)
            let image = try placeholder(source)
            #expect((image.width, image.height) == (width, height), "\(name)")
            let reference = try Self.reference(source + "[thumbnail]", rotation: nil, factor: 4)
            #expect(Self.largestDifference(image, reference) <= 1, "\(name)")
        }
    }

    /// Previews whose shape is not the photo's: a photo made smaller with its 160x120 preview kept
    /// (sony, fuji), a square photo and a 3:2 one with 4:3 previews (letterboxed).
    @Test func aPreviewOfAnotherShapeIsNotTrusted() throws {
        #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.fixture("sony-cybershot-small-orientation6.jpg")), side: 100)
            == .mismatched(preview: (120, 160), photo: (450, 311)))
        #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.fixture("fuji-sp2500-tiny-orientation6.jpg")), side: 100)
            == .mismatched(preview: (120, 160), photo: (121, 81)))
        guard TestFiles.hasCorpus else { return }
        #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.corpusPath("photos", "kodak-sp360-square-fisheye.jpg")), side: 100)
            == .mismatched(preview: (160, 120), photo: (3264, 3264)))
        #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.corpusPath("photos", "nikon-d40-orientation6.jpg")), side: 100)
            == .mismatched(preview: (120, 160), photo: (2000, 3008)))
    }

    @Test func noPreviewIsAbsent() throws {
        for name in ["Landscape_1.jpg", "kodak-dc210-1998-vga.jpg", "png-rgba-alpha-2048x1536.png"] {
            #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.fixture(name)), side: 100) == .absent, "\(name)")
        }
        guard TestFiles.hasCorpus else { return }
        // HEIFs without a thumbnail item: heifload gives the image itself, which is no preview.
        for name in ["avif-irot-imir.avif", "avif-portrait-p3-gps.avif"] {
            #expect(try renderer.embeddedPreview(file: DiskPath(TestFiles.corpusPath("formats", name)), side: 100) == .absent, "\(name)")
        }
    }

    @Test func anotherFileThanExpectedIsRefused() throws {
        let path = TestFiles.fixture("galaxy-s-orientation6-gps-vga.jpg")
        let error = #expect(throws: RenderError.self) {
            try renderer.embeddedPreview(file: DiskPath(path), side: 100, expected: SourceIdentity(size: 1, modifiedNanoseconds: 0))
        }
        #expect(error?.kind == .sourceChanged)
    }
}
