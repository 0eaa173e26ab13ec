import Foundation
import Rendering
import Testing

/// Every camera photo of `corpus/photos` at every default grid: exact size, JPEG, 8-bit sRGB,
/// no metadata. Expected sizes come from `vipsheader` of the original and docs/API.md's rules.
@Suite(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
struct CorpusPhotoTests {
    let renderer = Renderer()

    @Test(arguments: TestFiles.corpusFiles("photos"))
    func everyGridHasTheExpectedSize(name: String) throws {
        let path = TestFiles.corpusPath("photos", name)
        let display = try VipsCLI.displaySize(of: path)

        var thumbnails: [Thumbnail] = []
        for spec in GridSpec.defaults {
            let expected = expectedSize(spec, displayWidth: display.width, displayHeight: display.height)
            let contract = spec.outputSize(sourceWidth: display.width, sourceHeight: display.height)
            #expect(contract == expected, "GridSpec.outputSize disagrees at grid \(spec.name)")

            let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: spec))

            #expect((thumbnail.width, thumbnail.height) == expected, "grid \(spec.name)")
            #expect(thumbnail.format == .jpeg)
            #expect(Metadata.found(in: thumbnail.bytes).isEmpty, "grid \(spec.name)")
            thumbnails.append(thumbnail)
        }

        let decoded = try VipsCLI.summaries(ofEncoded: thumbnails.map(\.bytes))
        for (thumbnail, summary) in zip(thumbnails, decoded) {
            #expect((summary.width, summary.height) == (thumbnail.width, thumbnail.height))
            #expect(summary.loader == "jpegload" && summary.bands == 3)
            #expect(summary.format == "uchar" && summary.interpretation == "srgb")
        }
    }

    @Test func twelveMegapixelPhotoHasNoGPSInItsThumbnail() throws {
        let path = TestFiles.corpusPath("photos", "google-pixel-12mp-gps.jpg")
        #expect(try VipsCLI.header(of: path).fields.contains { $0.hasPrefix("exif-ifd3-GPS") })
        let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
        #expect(Metadata.found(in: thumbnail.bytes).isEmpty)
        let fields = try VipsCLI.header(ofEncoded: thumbnail.bytes).fields
        #expect(!fields.contains { $0.hasPrefix("exif") || $0.contains("gps") || $0.hasPrefix("xmp") })
    }
}

/// The EXIF orientation sets (recurser/exif-orientation-examples): `Landscape_0...8` and
/// `Portrait_0...8` show one picture stored eight ways (0 is invalid and reads as 1). Every
/// render must match the Orientation-1 render in size and, pixel by pixel, be close to it.
@Suite(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
struct CorpusOrientationTests {
    let renderer = Renderer()

    /// Mean |Δ| per band (0...255) under which two renders count as the same picture. Correct
    /// renders of these sets differ by JPEG noise only; a wrong rotation or mirror differs by
    /// tens.
    static let sameImageThreshold = 8.0

    @Test(arguments: ["Landscape", "Portrait"], [0, 2, 3, 4, 5, 6, 7, 8])
    func rendersUpright(set: String, orientation: Int) throws {
        let reference = TestFiles.corpusPath("photos", "\(set)_1.jpg")
        let path = TestFiles.corpusPath("photos", "\(set)_\(orientation).jpg")

        for grid in ["1", "3", "5"] {
            let expected = try renderer.render(RenderRequest(sourcePath: reference, spec: .grid(grid)))
            let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid(grid)))
            #expect((thumbnail.width, thumbnail.height) == (expected.width, expected.height),
                    "grid \(grid)")
            guard grid == "5" else { continue }   // pixels compared on the smallest render
            let difference = try VipsCLI.meanAbsoluteDifference(thumbnail.bytes, expected.bytes)
            #expect(difference < Self.sameImageThreshold,
                    "\(set)_\(orientation) grid \(grid): mean |Δ| \(difference)")
        }
    }

    @Test func aMissingMirrorOrRotationWouldBeCaught() throws {
        // The threshold means something: the upright render against itself mirrored (what a
        // renderer ignoring Orientation 2 would give) or turned upside down (Orientation 3).
        let upright = try renderer.render(RenderRequest(
            sourcePath: TestFiles.corpusPath("photos", "Landscape_1.jpg"), spec: .grid("5")))
        for direction in ["horizontal", "vertical"] {
            let flipped = try VipsCLI.flip(upright.bytes, direction)
            let difference = try VipsCLI.meanAbsoluteDifference(upright.bytes, flipped)
            #expect(difference > 3 * Self.sameImageThreshold,
                    "\(direction) flip differs by only \(difference)")
        }
    }
}
