import Foundation
import Rendering
import Testing

/// Header facts from `probe`, checked against `vipsheader`.
@Suite struct ProbeTests {
    let renderer = Renderer()

    /// `vipsheader -f name` of an EXIF text field, without the " (…)" description.
    private func exifText(_ name: String, of path: String) throws -> String? {
        try VipsCLI.field(name, of: path).map { text in
            text.range(of: " (").map { String(text[..<$0.lowerBound]) } ?? text
        }
    }

    @Test func orientationSixSwapsTheDisplaySize() throws {
        let path = TestFiles.fixture("Landscape_6.jpg")
        let info = try renderer.probe(path: path)
        #expect(info.width == (try VipsCLI.intField("width", of: path)))
        #expect(info.height == (try VipsCLI.intField("height", of: path)))
        #expect((info.width, info.height) == (1200, 1800))
        #expect(info.orientation == 6)
        #expect((info.displayWidth, info.displayHeight) == (1800, 1200))
        #expect(info.pages == 1)
        #expect(!info.hasAlpha)
        #expect(info.loader == "jpegload")
    }

    @Test func captureTimeIsTheRawExifText() throws {
        let path = TestFiles.fixture("galaxy-s-orientation6-gps-vga.jpg")
        let info = try renderer.probe(path: path)
        #expect(info.dateTimeOriginal == (try exifText("exif-ifd2-DateTimeOriginal", of: path)))
        #expect(info.dateTimeOriginal == "2011:04:02 18:30:10")
        #expect(info.offsetTimeOriginal == nil)
    }

    @Test func blankCaptureTimeIsNil() throws {
        // The Fuji writes "    :  :     :  :  " as DateTimeOriginal.
        let info = try renderer.probe(path: TestFiles.fixture("fuji-sp2500-tiny-orientation6.jpg"))
        #expect(info.dateTimeOriginal == nil)
        #expect(info.orientation == 6)
        #expect((info.displayWidth, info.displayHeight) == (121, 81))
    }

    @Test func rgbaPNGHasAlpha() throws {
        let info = try renderer.probe(path: TestFiles.fixture("png-rgba-alpha-2048x1536.png"))
        #expect(info.hasAlpha)
        #expect(info.loader == "pngload")
        #expect((info.width, info.height) == (2048, 1536))
    }

    @Test func probeErrorsHaveKinds() {
        do {
            _ = try renderer.probe(path: TestFiles.fixture("absent.jpg"))
            Issue.record("probed a missing file")
        } catch {
            #expect(error.kind == .sourceNotFound)
        }
        do {
            _ = try renderer.probe(path: TestFiles.fixture("empty.jpg"))
            Issue.record("probed an empty file")
        } catch {
            #expect(error.kind == .unsupportedSource)
        }
    }

    @Test(.enabled(if: TestFiles.hasCorpus, "needs the shared corpus"))
    func corpusHeaders() throws {
        let nokia = TestFiles.corpusPath("photos", "nokia83-wide-21x9-gps.jpg")
        let info = try renderer.probe(path: nokia)
        #expect(info.offsetTimeOriginal == (try exifText("exif-ifd2-OffsetTimeOriginal", of: nokia)))
        #expect(info.offsetTimeOriginal == "+03:00")
        #expect(info.dateTimeOriginal == "2022:08:14 14:12:31")

        let gif = try renderer.probe(path: TestFiles.corpusPath("formats", "gif-animated-loop3.gif"))
        #expect(gif.pages == 10 && gif.hasAlpha && gif.loader == "gifload")
        #expect((gif.width, gif.height) == (370, 285))   // one frame, not the stack

        let landscapeZero = try renderer.probe(path: TestFiles.corpusPath("photos", "Landscape_0.jpg"))
        #expect(landscapeZero.orientation == 1)   // the invalid value 0 reads as 1

        let heic = try renderer.probe(
            path: TestFiles.corpusPath("formats", "heic-iphone13-irot-and-exif-orientation6.heic"))
        #expect(heic.orientation == 1)   // libheif applied irot; the EXIF tag is dropped
        #expect((heic.displayWidth, heic.displayHeight) == (3024, 4032))
    }
}
