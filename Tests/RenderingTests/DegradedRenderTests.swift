import Foundation
import Rendering
import Testing

/// A JPEG cut short renders what decodes, the rest grey, marked `degraded` (issue 31, item 8;
/// docs/API.md "Thumbnails"); what decodes nothing, and other formats cut short, stay 415.
@Suite struct DegradedRenderTests {
    let renderer = Renderer()

    /// The fixture `name` cut to its first `bytes`, in a temporary directory the caller removes.
    /// `Landscape_1.jpg` is a real 1800x1200 baseline photo of 347,327 bytes.
    static func cut(_ name: String, to bytes: Int) throws -> (directory: URL, path: String) {
        let whole = try Data(contentsOf: URL(fileURLWithPath: TestFiles.fixture(name)))
        let directory = try TestFiles.temporaryDirectory()
        let path = directory.appendingPathComponent("cut-" + name).path
        try whole.prefix(bytes).write(to: URL(fileURLWithPath: path))
        return (directory, path)
    }

    @Test func aJPEGCutToSixtyPercentRendersItsTopAndGreyBelow() throws {
        // 60% of 347,327 bytes. At grid 1, 1800x1200 in 1179x2358: width limits,
        // 1200 * 1179 / 1800 = 786 rows. `vips thumbnail` of the cut file at fail_on=none decodes
        // to about row 460 of 786; rows 0..<400 are the photo's, rows 480..<786 grey 128.
        let (directory, path) = try Self.cut("Landscape_1.jpg", to: 208_396)
        defer { try? FileManager.default.removeItem(at: directory) }
        let degraded = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("1")))
        let intact = try renderer.render(RenderRequest(sourcePath: TestFiles.fixture("Landscape_1.jpg"), spec: .grid("1")))

        #expect(degraded.degraded)
        #expect(!intact.degraded)
        #expect((degraded.width, degraded.height) == (1179, 786))
        let decoded = try VipsCLI.header(ofEncoded: degraded.bytes)
        #expect((decoded.width, decoded.height, decoded.loader) == (1179, 786, "jpegload"))

        let top = try VipsCLI.meanAbsoluteDifference(VipsCLI.rows(degraded.bytes, top: 0, count: 400),
                                                     VipsCLI.rows(intact.bytes, top: 0, count: 400))
        #expect(top < 0.5, "the top 400 rows differ from the intact photo's by \(top) on average")

        let bottom = try VipsCLI.meanAndDeviation(ofEncoded: VipsCLI.rows(degraded.bytes, top: 500, count: 286))
        #expect(abs(bottom.mean - 128) < 1 && bottom.deviation < 1, "rows 500..<786: \(bottom)")
        let photoBottom = try VipsCLI.meanAndDeviation(ofEncoded: VipsCLI.rows(intact.bytes, top: 500, count: 286))
        #expect(photoBottom.deviation > 20, "the intact photo's rows 500..<786 are not flat: \(photoBottom)")
    }

    @Test(arguments: ["3", "5"])
    func aCutJPEGFillsACoverGridExactly(grid: String) throws {
        let (directory, path) = try Self.cut("Landscape_1.jpg", to: 208_396)
        defer { try? FileManager.default.removeItem(at: directory) }
        let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid(grid)))
        let side = grid == "3" ? 393 : 236
        #expect(thumbnail.degraded)
        #expect((thumbnail.width, thumbnail.height) == (side, side))
    }

    /// Still refused: a JPEG cut inside its header (its first 400 bytes: the SOS marker is at
    /// byte 482), a PNG cut in half (107,405 bytes whole; only JPEG is rendered degraded).
    @Test(arguments: [("Landscape_1.jpg", 400), ("png-rgba-alpha-2048x1536.png", 53_702)])
    func whatDoesNotDecodeOrIsNotAJPEGStaysUnsupported(name: String, bytes: Int) throws {
        let (directory, path) = try Self.cut(name, to: bytes)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let thumbnail = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
            Issue.record("\(name) cut to \(bytes) bytes rendered as \(thumbnail.width)x\(thumbnail.height)")
        } catch {
            #expect(error.kind == .unsupportedSource, "\(error)")
        }
    }

    @Test func textNamedJPEGStaysUnsupported() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("page.jpg").path
        try Data("<html><body>502 Bad Gateway</body></html>\n".utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try renderer.render(RenderRequest(sourcePath: path, spec: .grid("3")))
            Issue.record("text rendered")
        } catch {
            #expect(error.kind == .unsupportedSource, "\(error)")
        }
    }
}
