import Foundation
import Rendering
import Testing

/// Renders of the package's own fixtures (`Tests/Fixtures`): these always run.
@Suite struct FixtureRenderTests {
    let renderer = Renderer()

    @Test(arguments: ["Landscape_1.jpg", "Landscape_6.jpg", "galaxy-s-orientation6-gps-vga.jpg",
                      "sony-cybershot-small-orientation6.jpg", "fuji-sp2500-tiny-orientation6.jpg"],
          ["1", "3", "5"])
    func photoHasTheSizeVipsheaderImplies(name: String, grid: String) throws {
        let path = TestFiles.fixture(name)
        let spec = GridSpec.grid(grid)
        let display = try VipsCLI.displaySize(of: path)
        let expected = expectedSize(spec, displayWidth: display.width, displayHeight: display.height)

        let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: spec))

        #expect(thumbnail.format == .jpeg)
        #expect(thumbnail.width == expected.width && thumbnail.height == expected.height)
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.loader == "jpegload")
        #expect(decoded.width == expected.width && decoded.height == expected.height)
        #expect(decoded.bands == 3 && decoded.format == "uchar" && decoded.interpretation == "srgb")
    }

    @Test func landscapeAtGridThreeIsExactlyTheBox() throws {
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("Landscape_1.jpg"), spec: .grid("3")))
        #expect(thumbnail.width == 393)
        #expect(thumbnail.height == 393)
    }

    @Test func landscapeAtGridOneTouchesTheBoxWidth() throws {
        // 1800x1200 in 1179x2358: width limits, 1200 * 1179 / 1800 = 786.
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("Landscape_1.jpg"), spec: .grid("1")))
        #expect(thumbnail.width == 1179)
        #expect(thumbnail.height == 786)
    }

    @Test func orientationSixComesOutUpright() throws {
        let reference = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("Landscape_1.jpg"), spec: .grid("5")))
        let rotated = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("Landscape_6.jpg"), spec: .grid("5")))
        #expect(rotated.width == reference.width && rotated.height == reference.height)
        let difference = try VipsCLI.meanAbsoluteDifference(rotated.bytes, reference.bytes)
        #expect(difference < 6, "mean |Δ| \(difference) of 255: not upright")
    }

    @Test func tinySourceIsNeverEnlarged() throws {
        // 81x121 stored, Orientation 6: displayed 121x81.
        let path = TestFiles.fixture("fuji-sp2500-tiny-orientation6.jpg")
        let one = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("1")))
        let three = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
        let five = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("5")))
        #expect((one.width, one.height) == (121, 81))
        #expect((three.width, three.height) == (81, 81))
        #expect((five.width, five.height) == (81, 81))
    }

    @Test func gpsPhotoGivesNoMetadataAtAll() throws {
        let path = TestFiles.fixture("galaxy-s-orientation6-gps-vga.jpg")
        #expect(try VipsCLI.header(of: path).fields.contains { $0.hasPrefix("exif-ifd3-GPS") })

        let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))

        let fields = try VipsCLI.header(ofEncoded: thumbnail.bytes).fields
        #expect(!fields.contains { $0.hasPrefix("exif") || $0.contains("GPS") }, "\(fields)")
        #expect(!fields.contains { $0.contains("icc") || $0.contains("xmp") || $0.contains("iptc") })
        #expect(Metadata.found(in: thumbnail.bytes).isEmpty)
    }

    @Test func rgbaPNGGivesPNGWithAlpha() throws {
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("png-rgba-alpha-2048x1536.png"), spec: .grid("3")))
        #expect(thumbnail.format == .png)
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.loader == "pngload")
        #expect(decoded.bands == 4)
        #expect((decoded.width, decoded.height) == (393, 393))
        // The corner is fully transparent in the source and must stay so.
        #expect(try VipsCLI.pixel(ofEncoded: thumbnail.bytes, x: 0, y: 0).last == 0)
    }

    @Test func forcedJPEGOfRGBAIsFlattenedOnWhite() throws {
        // PngSuite basi6a08: pixel (0,0) is RGB 255,0,8 with alpha 0; (31,0) is opaque 255,0,8.
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("png-rgba-interlaced-adam7.png"), spec: .grid("1"),
            format: .jpeg))
        #expect(thumbnail.format == .jpeg)
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.loader == "jpegload" && decoded.bands == 3)
        let transparent = try VipsCLI.pixel(ofEncoded: thumbnail.bytes, x: 0, y: 0)
        #expect(transparent.allSatisfy { $0 > 215 }, "transparent corner became \(transparent)")
        let opaque = try VipsCLI.pixel(ofEncoded: thumbnail.bytes, x: 31, y: 0)
        #expect(opaque[0] > 200 && opaque[1] < 80, "opaque red corner became \(opaque)")
    }

    @Test func webpOnRequest() throws {
        let thumbnail = try renderer.render(RenderRequest(
            sourcePath: TestFiles.fixture("png-rgba-alpha-2048x1536.png"), spec: .grid("5"),
            format: .webp))
        #expect(thumbnail.format == .webp)
        let decoded = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(decoded.loader == "webpload")
        #expect(decoded.bands == 4)
        #expect((decoded.width, decoded.height) == (236, 236))
    }

    @Test func qualityChangesTheJPEG() throws {
        let path = TestFiles.fixture("Landscape_1.jpg")
        let low = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3"), quality: 30))
        let high = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3"), quality: 95))
        #expect(low.bytes.count < high.bytes.count)
    }

    @Test func sameRequestGivesSameBytes() throws {
        let request = RenderRequest(sourcePath: TestFiles.fixture("Landscape_6.jpg"), spec: .grid("3"))
        #expect(try renderer.render(request).bytes == renderer.render(request).bytes)
    }
}
