import Foundation
import Rendering
import Testing
import TestSupport

/// Videos' poster frames (README "Videos"): the frame rule, rotation, sizes and formats, judged
/// by pixels of the encoded thumbnails (`vips getpoint`) against the fixtures' second boxes.
@Suite struct VideoRenderTests {
    let renderer = VideoFixtures.renderer()

    /// The thumbnail of fixture `name` at `grid`.
    func render(_ name: String, grid: String = "1", format: ImageFormat? = nil) throws -> Thumbnail {
        try renderer.render(RenderRequest(sourcePath: VideoFixtures.path(name), spec: .grid(grid), format: format))
    }

    /// Whether `pixel` is within 40 of `rgb` on every band (JPEG at Q80 moves a flat box's centre a few levels).
    func near(_ pixel: [Double], _ rgb: [Double]) -> Bool {
        pixel.count >= 3 && zip(pixel, rgb).allSatisfy { abs($0 - $1) <= 40 }
    }

    /// The box colour at the centre of a 320x240 clip's thumbnail at grid 1 (kept at 320x240).
    func centreColour(_ name: String) throws -> [Double] {
        let thumbnail = try render(name)
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
        return try VipsCLI.pixel(ofEncoded: thumbnail.bytes, x: 160, y: 120)
    }

    @Test func longerClipGivesTheFirstKeyframeAfterTenPercent() throws {
        // 6 s: min(0.6 s, 10 s) = 0.6 s; the next keyframe is at 1 s, whose box is lime.
        #expect(near(try centreColour("h264.mp4"), VideoFixtures.secondColours[1].rgb))
    }

    @Test func clipOfTwoSecondsGivesItsFirstFrame() throws {
        #expect(near(try centreColour("short.mp4"), VideoFixtures.secondColours[0].rgb))
    }

    @Test func whenEveryKeyframeIsDarkTheFirstIsKept() throws {
        // Six dark keyframes, 1920x1080: all looked at, none bright; still a poster, at grid 1's size.
        let thumbnail = try render("dark-noise.mp4")
        let expected = expectedSize(.grid("1"), displayWidth: 1920, displayHeight: 1080)
        #expect(thumbnail.width == expected.width && thumbnail.height == expected.height)
    }

    @Test func streamOfUnknownDurationGivesItsFirstFrame() throws {
        #expect(try renderer.probe(path: VideoFixtures.path("live.webm")).durationMilliseconds == 0)
        #expect(near(try centreColour("live.webm"), VideoFixtures.secondColours[0].rgb))
    }

    @Test func blackKeyframesGiveWayToTheNextOne() throws {
        // Black until 2.5 s: keyframes at 1 s and 2 s are black; 3 s (yellow) is the poster.
        #expect(near(try centreColour("black-start.mp4"), VideoFixtures.secondColours[3].rgb))
    }

    @Test(arguments: ["iphone.mov", "vp9.webm", "mpeg4.avi", "hlg.mp4"])
    func everyContainerRendersItsSecondOneKeyframe(name: String) throws {
        // 3 s: the rule's time is 0.3 s, the keyframe at 1 s (lime).
        #expect(near(try centreColour(name), VideoFixtures.secondColours[1].rgb))
    }

    @Test(arguments: [("portrait.mov", (150, 40)), ("portrait-ccw.mov", (30, 280))])
    func displayMatrixIsAppliedAsFFmpegShowsIt(name: String, corner: (x: Int, y: Int)) throws {
        // Stored 320x180 with an 80x60 red box at the top left. The phone's matrix (90°
        // clockwise) puts it at the top right of 180x320, the other one at the bottom left; the
        // whole poster (the keyframe at 1 s) matches the ffmpeg CLI's own decode of that frame.
        let thumbnail = try render(name)
        #expect(thumbnail.width == 180 && thumbnail.height == 320)
        #expect(near(try VipsCLI.pixel(ofEncoded: thumbnail.bytes, x: corner.x, y: corner.y), [255, 0, 0]))
        let reference = VideoFixtures.referenceFrame(name, second: 1)
        // JPEG at Q80 of testsrc2's saturated stripes: about 5 levels on average.
        #expect(try VipsCLI.meanAbsoluteDifference(thumbnail.bytes, reference) < 8)
        // Judged the other way up, the same poster is far from it (the test can fail).
        #expect(try VipsCLI.meanAbsoluteDifference(VipsCLI.flip(thumbnail.bytes, "vertical"), reference) > 20)
    }

    @Test(arguments: [("anamorphic.mp4", (720, 480), (853, 480), (853, 480)),
                      ("square-sar.mp4", (1080, 1080), (1920, 1080), (1179, 663)),
                      ("anamorphic-portrait.mov", (720, 480), (480, 853), (480, 853))])
    func nonSquarePixelsAreShownAtTheirDisplayAspect(name: String, stored: (width: Int, height: Int),
                                                     shown: (width: Int, height: Int), grid1: (width: Int, height: Int)) throws {
        // The width times the sample aspect ratio, the height kept (ffprobe's display_aspect_ratio):
        // 720 x 32/27 = 853.3 → 853 (16:9); 1080 x 16/9 = 1920; the phone's matrix then swaps the sides.
        let info = try renderer.probe(path: VideoFixtures.path(name))
        #expect(info.width == stored.width && info.height == stored.height)
        #expect(info.displayWidth == shown.width && info.displayHeight == shown.height)
        // Grid 1 (contain in 1179x2358, never enlarging): the whole displayed frame, or
        // 1920x1080 scaled by 1179/1920: 1179 x 663.2 → 1179x663.
        let poster = try render(name, format: .png)
        #expect(poster.width == grid1.width && poster.height == grid1.height)
        #expect(try VipsCLI.header(ofEncoded: poster.bytes).width == grid1.width)
    }

    @Test func anamorphicPosterIsStretchedAsFFmpegScalesIt() throws {
        // The poster's pixels are the frame widened to 853 (not padded, not cropped): against the
        // ffmpeg CLI's own decode of the first frame scaled to its display size.
        let poster = try render("anamorphic.mp4", format: .png)
        let reference = VideoFixtures.referenceFrame("anamorphic.mp4", second: 0, filters: "scale=853:480,setsar=1")
        #expect(try VipsCLI.meanAbsoluteDifference(poster.bytes, reference) < 3)
        // The stored 720 columns, squeezed back, are far from it (the test can fail).
        let unstretched = VideoFixtures.referenceFrame("anamorphic.mp4", second: 0, filters: "pad=853:480:0:0,setsar=1")
        #expect(try VipsCLI.meanAbsoluteDifference(poster.bytes, unstretched) > 20)
    }

    @Test func hdrPosterIsToneMappedAsFFmpegsRecipeDoes() throws {
        // hlg.mp4 is 10-bit HEVC tagged BT.2020 HLG. Its poster (PNG: no JPEG noise) matches the
        // ffmpeg CLI's zscale + tonemap (Hable) recipe on the same keyframe, and is far from the
        // same frame converted without tone-mapping (what a washed-out poster would be).
        let thumbnail = try render("hlg.mp4", format: .png)
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
        let recipe = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
            + "zscale=t=bt709:m=bt709:r=pc,format=rgb24"
        let toneMapped = VideoFixtures.referenceFrame("hlg.mp4", second: 1, filters: recipe)
        #expect(try VipsCLI.meanAbsoluteDifference(thumbnail.bytes, toneMapped) < 2)
        let plain = VideoFixtures.referenceFrame("hlg.mp4", second: 1)
        #expect(try VipsCLI.meanAbsoluteDifference(thumbnail.bytes, plain) > 6)
    }

    @Test(arguments: ["3", "5"])
    func coverGridsAreExactSquares(grid: String) throws {
        // 320x240 shorter than 393 or not: cover never enlarges, 240x240 at grid 3, 236x236 at 5.
        let thumbnail = try render("h264.mp4", grid: grid)
        let side = grid == "3" ? 240 : 236
        #expect(thumbnail.width == side && thumbnail.height == side)
        let header = try VipsCLI.header(ofEncoded: thumbnail.bytes)
        #expect(header.loader == "jpegload" && header.bands == 3 && header.interpretation == "srgb")
    }

    @Test func webPIsEncodedWhenAsked() throws {
        let thumbnail = try render("h264.mp4", grid: "5", format: .webp)
        #expect(thumbnail.format == .webp)
        #expect(try VipsCLI.header(ofEncoded: thumbnail.bytes).loader == "webpload")
    }

    @Test func headerGivesDisplayedSizeDurationAndCreationTime() throws {
        let portrait = try renderer.probe(path: VideoFixtures.path("portrait.mov"))
        #expect(portrait.width == 320 && portrait.height == 180)
        #expect(portrait.displayWidth == 180 && portrait.displayHeight == 320)
        #expect(portrait.durationMilliseconds == 3000)
        let mp4 = try renderer.probe(path: VideoFixtures.path("h264.mp4"))
        #expect(mp4.durationMilliseconds == 6000)
        #expect(mp4.dateTimeOriginal == "2021:06:01 10:00:00" && mp4.offsetTimeOriginal == "+00:00")
        let iphone = try renderer.probe(path: VideoFixtures.path("iphone.mov"))
        #expect(iphone.dateTimeOriginal == "2022:03:04 05:06:07" && iphone.offsetTimeOriginal == "+09:00")
    }
}
