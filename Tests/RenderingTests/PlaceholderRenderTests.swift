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

    /// `vips shrink --ceil` (a box filter of a whole factor, as the render's) of the encoded
    /// thumbnail by `factor` on both axes, as raw RGB(A) bytes and its bands.
    func reference(of thumbnail: Thumbnail, factor: Int) throws -> (pixels: [UInt8], bands: Int) {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("thumbnail").path, output = directory.appendingPathComponent("small.v").path
        try Data(thumbnail.bytes).write(to: URL(fileURLWithPath: input))
        _ = try VipsCLI.run("vips", ["shrink", input, output, String(factor), String(factor), "--ceil"])
        let raw = directory.appendingPathComponent("small.raw").path
        _ = try VipsCLI.run("vips", ["rawsave", output, raw])
        let bands = try VipsCLI.intField("bands", of: output) ?? 0
        return ([UInt8](FileManager.default.contents(atPath: raw) ?? Data()), bands)
    }

    @Test func containGridGivesTheWholePhotoAtOneHundredPixels() throws {
        // 1800x1200 at grid 1 is 1179x786; the least whole factor that fits 100x100 is
        // ceil(1179 / 100) = 12: 1179 / 12 = 98.25 -> 99, 786 / 12 = 65.5 -> 66 (rounded up).
        let thumbnail = try render("Landscape_1.jpg", grid: "1", format: .png)
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (99, 66))
        #expect(placeholder.rgba.count == 99 * 66 * 4)
        #expect(stride(from: 3, to: placeholder.rgba.count, by: 4).allSatisfy { placeholder.rgba[$0] == 255 })
        let reference = try reference(of: thumbnail, factor: 12)
        try #require(reference.bands == 3 && reference.pixels.count == 99 * 66 * 3)
        var differences: [Int] = []
        for pixel in 0..<(99 * 66) {
            for band in 0..<3 { differences.append(abs(Int(placeholder.rgba[pixel * 4 + band]) - Int(reference.pixels[pixel * 3 + band]))) }
        }
        // The reference shrinks the same pixels (the thumbnail as a lossless PNG) the same way.
        #expect(differences.max() ?? 255 <= 1, "a channel \(differences.max() ?? 255) levels from vips shrink's")
    }

    @Test func coverGridGivesTheWholePhotoNotItsSquare() throws {
        // 1800x1200 at grid 3 (393 cover): the covering 590x393 before the crop, shrunk by
        // ceil(590 / 100) = 6: 590 / 6 = 98.3 -> 99, 393 / 6 = 65.5 -> 66.
        let thumbnail = try render("Landscape_1.jpg", grid: "3")
        #expect((thumbnail.width, thumbnail.height) == (393, 393))
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (99, 66))
        #expect(placeholder.microseconds >= 0)
    }

    @Test func aSmallThumbnailIsNotEnlarged() throws {
        // 81x121 with orientation 6 shows 121x81; grid 5 (236 cover) gives its 81x81 centre,
        // the placeholder the whole 121x81 shrunk by ceil(121 / 100) = 2: 60.5 -> 61, 40.5 -> 41.
        let thumbnail = try render("fuji-sp2500-tiny-orientation6.jpg", grid: "5")
        #expect((thumbnail.width, thumbnail.height) == (81, 81))
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (61, 41))
    }

    @Test func alphaIsKeptEvenWhenTheThumbnailIsAJPEG() throws {
        // 2048x1536, mostly transparent; grid 5 forced to JPEG is flattened on white, the
        // placeholder keeps the alpha it had before. The covering image is 2048 / 6.508 = 315
        // x 236, shrunk by ceil(315 / 100) = 4: 78.75 -> 79, 59.
        let thumbnail = try render("png-rgba-alpha-2048x1536.png", grid: "5", format: .jpeg)
        #expect(thumbnail.format == .jpeg)
        let placeholder = try #require(thumbnail.placeholder)
        #expect((placeholder.width, placeholder.height) == (79, 59))
        let alphas = stride(from: 3, to: placeholder.rgba.count, by: 4).map { placeholder.rgba[$0] }
        #expect(alphas.min() == 0)
    }

    @Test func noPlaceholderUnlessAskedFor() throws {
        let thumbnail = try render("Landscape_1.jpg", grid: "5", side: 0)
        #expect(thumbnail.placeholder == nil)
    }
}
