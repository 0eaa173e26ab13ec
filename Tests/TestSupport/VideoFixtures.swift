import Foundation
import Rendering

/// Small videos made at test time by Debian's `ffmpeg` CLI (lavfi `testsrc2`, no downloads),
/// once per test process, in a directory of their own; and hostile files made from them.
///
/// The clips mark each second with a 100x100 box at the centre of the 320x240 frame (180
/// high for `portrait.mov`), in `secondColours` order, over testsrc2's busy pattern, so that
/// which second a poster was taken from shows in its centre pixel, while the frame as a whole
/// is never flat. Keyframes fall on every whole second (`-g 25` at 25 fps, no scene cuts).
public enum VideoFixtures {
    /// The box colour of second 0, 1, 2, ... (ffmpeg colour names) and its RGB.
    public static let secondColours: [(name: String, rgb: [Double])] = [
        ("red", [255, 0, 0]), ("lime", [0, 255, 0]), ("blue", [0, 0, 255]), ("yellow", [255, 255, 0]),
        ("magenta", [255, 0, 255]), ("cyan", [0, 255, 255]), ("white", [255, 255, 255]), ("orange", [255, 165, 0]),
    ]

    /// What each fixture is (file name → ffmpeg arguments after `-y`).
    static let recipes: [(name: String, arguments: [String])] = [
        // 6 s H.264: the rule's time is 0.6 s, so the keyframe at 1 s (lime).
        ("h264.mp4", lavfi(seconds: 6) + x264 + ["-movflags", "+faststart", "-metadata", "creation_time=2021-06-01T10:00:00Z"]),
        // 2 s: the first frame (red).
        ("short.mp4", lavfi(seconds: 2) + x264),
        // 5 s, black until 2.5 s, with audio: keyframes at 1 s and 2 s are black, 3 s (yellow) is chosen.
        ("black-start.mp4", lavfi(seconds: 5, extra: ",drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='lt(t,2.5)'",
                                  audio: true) + x264 + ["-c:a", "aac"]),
        // QuickTime with Apple's creation date (its offset kept).
        ("iphone.mov", lavfi(seconds: 3) + x264 + ["-movflags", "use_metadata_tags",
                                                    "-metadata", "com.apple.quicktime.creationdate=2022-03-04T05:06:07+0900"]),
        // A live stream as a recorder writes it: no duration, no cues (the first keyframe's rule).
        ("live.webm", lavfi(seconds: 4) + ["-c:v", "libvpx", "-deadline", "realtime", "-g", "25", "-b:v", "200k",
                                           "-f", "webm", "-live", "1"]),
        // One black VP8 frame, as a live recorder writes WebM (no cues): the head of `makeHanging`.
        ("black.webm", ["-f", "lavfi", "-i", "color=black:size=320x240:rate=25:duration=1", "-c:v", "libvpx",
                        "-deadline", "realtime", "-g", "25", "-b:v", "200k", "-f", "webm", "-live", "1"]),
        ("vp9.webm", lavfi(seconds: 3) + ["-c:v", "libvpx-vp9", "-g", "25", "-deadline", "realtime", "-b:v", "200k"]),
        ("mpeg4.avi", lavfi(seconds: 3) + ["-c:v", "mpeg4", "-g", "25", "-q:v", "5"]),
        ("hlg.mp4", lavfi(seconds: 3) + ["-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-x265-params", "keyint=25:log-level=none",
                                        "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc",
                                        "-tag:v", "hvc1"]),
        // Six 1920x1080 keyframes of dark noise, lossless with CABAC (slow to decode): each is
        // near-black, so the rule decodes all six (most of a second), long enough for a test to
        // see the helper holding the file and kill it mid-decode.
        ("dark-noise.mp4", ["-f", "lavfi", "-i", "nullsrc=s=1920x1080:d=2:r=3,geq=lum='random(1)*20':cb=128:cr=128",
                            "-c:v", "libx264", "-preset", "veryfast", "-qp", "0", "-g", "1", "-pix_fmt", "yuv420p"]),
        // Non-square pixels (the sample aspect ratio, in the stream and the mp4's pasp box): DVD
        // NTSC widescreen, 720x480 shown 853x480 (ffprobe's display_aspect_ratio 16:9); and a
        // square frame stretched to 1920x1080 (SAR 16:9). 1 s each: the first frame is the poster.
        ("anamorphic.mp4", ["-f", "lavfi", "-i", "testsrc2=size=720x480:rate=25:duration=1,format=yuv420p,setsar=32/27"] + x264),
        ("square-sar.mp4", ["-f", "lavfi", "-i", "testsrc2=size=1080x1080:rate=25:duration=1,format=yuv420p,setsar=16/9"] + x264),
        // 320x180 landscape with a red box top left; the 90° matrix is set by stream copy below.
        ("landscape.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x180:rate=25:duration=3,format=yuv420p,"
                           + "drawbox=x=0:y=0:w=80:h=60:color=red:t=fill"] + x264),
    ]

    static let x264 = ["-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
                       "-pix_fmt", "yuv420p"]

    /// testsrc2 at 320x240, 25 fps, `seconds` long, with the box of each second; `extra`: more
    /// filters after the boxes; `audio`: a sine track too.
    static func lavfi(seconds: Int, extra: String = "", audio: Bool = false) -> [String] {
        let boxes = (0..<seconds).map { s in
            "drawbox=x=110:y=70:w=100:h=100:color=\(secondColours[s % secondColours.count].name):t=fill:enable='gte(t,\(s))*lt(t,\(s + 1))'"
        }.joined(separator: ",")
        var arguments = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds),format=yuv420p," + boxes + extra]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)"] }
        return arguments
    }

    /// The directory holding every fixture: made on first use.
    public static let directory: String = {
        let directory = NSTemporaryDirectory() + "thumbd-videos-\(getpid())-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, arguments) in recipes {
            ffmpeg(["-y", "-loglevel", "error"] + arguments + [directory + "/" + name])
        }
        // Display matrices by stream copy (5.1 writes none when `rotate` is set while encoding).
        // 5.1 reads the tag as counter-clockwise degrees here: `rotate=270` gives the matrix of
        // a phone held upright (av_display_rotation_get -90: shown 90° clockwise, ffprobe
        // `rotation=-90`), `rotate=90` the other way (shown 90° counter-clockwise).
        for (name, source, rotate) in [("portrait.mov", "landscape.mp4", "270"), ("portrait-ccw.mov", "landscape.mp4", "90"),
                                       ("anamorphic-portrait.mov", "anamorphic.mp4", "270")] {
            ffmpeg(["-y", "-loglevel", "error", "-i", directory + "/" + source, "-c", "copy",
                    "-metadata:s:v:0", "rotate=" + rotate, directory + "/" + name])
        }
        makeHostile(in: directory)
        return directory
    }()

    /// The absolute path of fixture `name`.
    public static func path(_ name: String) -> String {
        directory + "/" + name
    }

    /// The frame at `second` of fixture `name` as the `ffmpeg` CLI decodes it (display matrix
    /// applied, its autorotate default) through `filters` (`-vf`, none by default) into 8-bit
    /// RGB, PNG: the independent reference for posters.
    public static func referenceFrame(_ name: String, second: Int, filters: String? = nil) -> [UInt8] {
        let output = NSTemporaryDirectory() + "thumbd-reference-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: output) }
        ffmpeg(["-y", "-loglevel", "error", "-ss", String(second), "-i", path(name), "-frames:v", "1"]
               + (filters.map { ["-vf", $0] } ?? []) + ["-pix_fmt", "rgb24", output])
        return [UInt8](FileManager.default.contents(atPath: output)!)
    }

    /// Runs `ffmpeg arguments…`; a failure stops the test process (the fixtures are the tests' ground).
    static func ffmpeg(_ arguments: [String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        try! process.run()
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "ffmpeg \(arguments) failed")
    }

    /// Hostile files made from `short.mp4` (its moov at the end, as ffmpeg writes by default)
    /// and `h264.mp4` (faststart: moov first).
    static func makeHostile(in directory: String) {
        let short = [UInt8](FileManager.default.contents(atPath: directory + "/short.mp4")!)
        let faststart = [UInt8](FileManager.default.contents(atPath: directory + "/h264.mp4")!)
        func write(_ name: String, _ bytes: [UInt8]) {
            precondition(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(bytes)))
        }
        // Cut before its moov: the header never comes.
        write("truncated.mp4", Array(short.prefix(short.count / 2)))
        write("empty.mp4", [])
        write("text.mp4", Array("this is not a video, only text named as one\n".utf8))
        // The stsd sample entry's size (not the "avc1" brand in ftyp) (avc1: 6 reserved bytes, a data reference index, 16 bytes
        // predefined, then width and height, 16 bits each) set to 16384 x 16384.
        var huge = faststart
        if let stsd = huge.firstRange(of: Array("stsd".utf8))?.upperBound,
           let avc1 = huge[stsd...].firstRange(of: Array("avc1".utf8))?.lowerBound {
            for offset in [28, 30] { huge[avc1 + offset] = 0x40; huge[avc1 + offset + 1] = 0x00 }
        }
        write("huge-16k.mp4", huge)
        // Every byte of the media data scrambled: the header is fine, no frame decodes.
        var corrupt = faststart
        if let mdat = corrupt.firstRange(of: Array("mdat".utf8))?.upperBound {
            var seed: UInt32 = 12345
            for i in mdat..<corrupt.count {
                seed = seed &* 1_103_515_245 &+ 12345
                corrupt[i] = UInt8(truncatingIfNeeded: seed >> 16)
            }
        }
        write("corrupt.mp4", corrupt)
    }

    /// Writes at `path` a WebM whose poster decode really hangs: `black.webm` followed by a
    /// terabyte of holes (sparse: no block is written). Its header reads at once (it ends at the
    /// first cluster); the black frame sends the frame rule on to the next keyframe, and
    /// Matroska's resync then reads the zeros byte by byte without ever consulting libav's
    /// interrupt callback (`ffmpeg -i` itself spins on it, deaf to SIGTERM), a core busy until
    /// the helper is killed.
    public static func makeHanging(at path: String) {
        let bytes = FileManager.default.contents(atPath: self.path("black.webm"))!
        precondition(FileManager.default.createFile(atPath: path, contents: bytes))
        precondition(truncate(path, 1 << 40) == 0, "cannot make \(path) sparse to 1 TiB")
    }

    /// The built `thumbd` beside the test runner (`.build/<configuration>/`), run as the video
    /// helper by tests (their own process is the runner, not thumbd).
    public static let helperExecutable: String = {
        let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (runner as NSString).deletingLastPathComponent + "/thumbd"
    }()

    /// A renderer whose videos are decoded by helpers of `helperExecutable`.
    public static func renderer(decoders: Int = 2, timeoutMilliseconds: Int = 10_000) -> Renderer {
        Renderer(videoPosters: VideoPosters(configuration: .init(
            executable: helperExecutable, decoders: decoders, timeoutMilliseconds: timeoutMilliseconds)))
    }
}
