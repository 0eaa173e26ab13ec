import Foundation
import Rendering
import Testing

/// The placeholder image a render makes beside its thumbnail (`RenderRequest.placeholderSide`):
/// sizes worked out by hand, pixels judged against `vips shrink` of the rendered thumbnail.
@Suite struct PlaceholderRenderTests {
    let renderer = Renderer()

    func render(_ name: String, grid: String, format: ImageFormat? = nil, side: Int = 100) throws -> Thumbnail {
        var request = RenderRequest(sourcePath: TestFiles.fixture(name), spec: .grid(grid), format: format)
        request.placeholderSide = side
        return try renderer.render(request)
    }

    /// `vips shrink` (a box filter, as the render's) of the encoded thumbnail to `width` x
    /// `height`, as raw RGB(A) bytes and its bands.
    func reference(of thumbnail: Thumbnail, width: Int, height: Int) throws -> (pixels: [UInt8], bands: Int) {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("thumbnail").path, output = directory.appendingPathComponent("small.v").path
        try Data(thumbnail.bytes).write(to: URL(fileURLWithPath: input))
        _ = try VipsCLI.run("vips", ["shrink", input, output, String(Double(thumbnail.width) / Double(width)),
                                      String(Double(thumbnail.height) / Double(height))])
        let raw = directory.appendingPathComponent("small.raw").path
        _ = try VipsCLI.run("vips", ["rawsave", output, raw])
        let bands = try VipsCLI.intField("bands", of: output) ?? 0
        return ([UInt8](FileManager.default.contents(atPath: raw) ?? Data()), bands)
    }

    @Test func containGridGivesTheWholePhotoAtOneHundredPixels() throws {
        // 1800x1200 at grid 1 is 1179x786; in 100x100: 100 x 786 * 100 / 1179 = 66.7 -> 67.
        let thumbnail = try render("Landscape_1.jpg", grid: "1", format: .png)
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (100, 67))
        #expect(placeholder.rgba.count == 100 * 67 * 4)
        #expect(stride(from: 3, to: placeholder.rgba.count, by: 4).allSatisfy { placeholder.rgba[$0] == 255 })
        let reference = try reference(of: thumbnail, width: 100, height: 67)
        try #require(reference.bands == 3 && reference.pixels.count == 100 * 67 * 3)
        var differences: [Int] = []
        for pixel in 0..<(100 * 67) {
            for band in 0..<3 { differences.append(abs(Int(placeholder.rgba[pixel * 4 + band]) - Int(reference.pixels[pixel * 3 + band]))) }
        }
        // The reference shrinks the same pixels (the thumbnail as a lossless PNG) the same way.
        #expect(differences.max() ?? 255 <= 1, "a channel \(differences.max() ?? 255) levels from vips thumbnail_image's")
    }

    @Test func coverGridGivesTheWholePhotoNotItsSquare() throws {
        // 1800x1200 at grid 3 (393 cover): the covering 590x393 before the crop; in 100x100:
        // 100 x 393 * 100 / 590 = 66.6 -> 67.
        let thumbnail = try render("Landscape_1.jpg", grid: "3")
        #expect((thumbnail.width, thumbnail.height) == (393, 393))
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (100, 67))
        #expect(placeholder.microseconds >= 0)
    }

    @Test func aSmallThumbnailIsNotEnlarged() throws {
        // 81x121 with orientation 6 shows 121x81; grid 5 (236 cover) gives its 81x81 centre,
        // the placeholder the whole 121x81 in 100x100: 100 x 81 * 100 / 121 = 66.9 -> 67.
        let thumbnail = try render("fuji-sp2500-tiny-orientation6.jpg", grid: "5")
        #expect((thumbnail.width, thumbnail.height) == (81, 81))
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (100, 67))
    }

    @Test func alphaIsKeptEvenWhenTheThumbnailIsAJPEG() throws {
        // 2048x1536, mostly transparent; grid 5 forced to JPEG is flattened on white, the
        // placeholder keeps the alpha it had before. The covering image is 2048 / 6.508 = 315
        // x 236; in 100x100: 100 x 236 * 100 / 315 = 74.9 -> 75.
        let thumbnail = try render("png-rgba-alpha-2048x1536.png", grid: "5", format: .jpeg)
        #expect(thumbnail.format == .jpeg)
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (100, 75))
        let alphas = stride(from: 3, to: placeholder.rgba.count, by: 4).map { placeholder.rgba[$0] }
        #expect(alphas.min() == 0)
    }

    @Test func noPlaceholderUnlessAskedFor() throws {
        let thumbnail = try render("Landscape_1.jpg", grid: "5", side: 0)
        #expect(thumbnail.placeholder == nil)
    }
}
