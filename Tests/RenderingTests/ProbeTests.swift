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

    /// An embedded profile asks for an ICC transform unless it is HP's sRGB IEC61966-2.1 (v2.1,
    /// the profile cameras and editors embed), whose transform to sRGB changes nothing: imgproxy's
    /// rule (cvips_header.c). Another sRGB profile (the Pixel's own v4 one), Display P3 and Adobe
    /// RGB still ask for one; a photo without a profile never does.
    @Test(arguments: [
        ("photos", "iphone6plus-portrait-8mp-gps.jpg", false),   // HP's sRGB, 3,144 bytes
        ("photos", "olympus-fe230-portrait-gps.jpg", false),     // the same profile
        ("photos", "google-pixel-12mp-gps.jpg", true),           // Google's v4 sRGB, 596 bytes
        ("formats", "jpeg-display-p3-icc-12mp.jpg", true),
        ("formats", "jpeg-adobe-rgb-icc.jpg", true),
        ("photos", "Landscape_0.jpg", false),                    // no profile
    ])
    func onlyAProfileOtherThanSRGBAsksForATransform(folder: String, name: String, transform: Bool) throws {
        let info = try renderer.probe(path: TestFiles.corpusPath(folder, name))
        #expect(info.needsColourTransform == transform)
    }

    /// What skipping it is worth: `vipsthumbnail` with and without `--export-profile srgb` gives
    /// the same pixels for the two photos with HP's profile, and different ones for Adobe RGB (the
    /// comparison can tell).
    @Test func theSRGBProfilesTransformChangesNothing() throws {
        let directory = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func difference(_ folder: String, _ name: String) throws -> Double {
            let plain = directory.appendingPathComponent("plain-\(name).png").path
            let transformed = directory.appendingPathComponent("transformed-\(name).png").path
            let source = TestFiles.corpusPath(folder, name)
            _ = try VipsCLI.run("vipsthumbnail", [source, "-s", "200", "-o", plain])
            _ = try VipsCLI.run("vipsthumbnail", [source, "-s", "200", "--export-profile", "srgb", "--intent", "perceptual", "-o", transformed])
            return try VipsCLI.meanAbsoluteDifference([UInt8](Data(contentsOf: URL(fileURLWithPath: plain))),
                                                      [UInt8](Data(contentsOf: URL(fileURLWithPath: transformed))))
        }
        #expect(try difference("photos", "iphone6plus-portrait-8mp-gps.jpg") < 0.5)
        #expect(try difference("photos", "olympus-fe230-portrait-gps.jpg") < 0.5)
        #expect(try difference("formats", "jpeg-adobe-rgb-icc.jpg") > 5)
    }
}
