import Foundation
@testable import Library
import Rendering
import Testing
import TestSupport

/// A video's `taken` (docs/API.md, "Listing"): its container's creation time when it is one, else
/// its file time, as for a photo without EXIF (issue 31, item 8b: a video "without a creation
/// time" sorted as the newest item). Each case is a real file, made by ffmpeg from the fixture
/// clips or with its QuickTime `mvhd`/`mdhd` times set byte for byte, read by the index.
@Suite struct VideoTakenTests {
    /// Every file's modification time: 2024-06-07T08:09:10Z.
    static let modified: time_t = 1_717_747_750
    static let modifiedText = "2024-06-07T08:09:10+00:00"
    /// Seconds from 1904-01-01 (QuickTime's epoch) to 1970-01-01.
    static let quickTimeEpoch: UInt32 = 2_082_844_800

    /// name → the `taken` expected, and how the file is made.
    static let cases: [(name: String, taken: String, make: Make)] = [
        // ffmpeg writes 0 in mvhd/mdhd without a creation_time: ffmpeg reads no date.
        ("none.mp4", modifiedText, .copy("short.mp4")),
        ("none.webm", modifiedText, .copy("vp9.webm")),
        ("none.avi", modifiedText, .copy("mpeg4.avi")),
        // QuickTime 2,082,844,800: 1970-01-01T00:00:00Z, Unix 0.
        ("zero-1970.mp4", modifiedText, .quickTime(quickTimeEpoch)),
        // QuickTime 1, 1904-01-01T00:00:01, which ffmpeg reads as Unix seconds: 1970-01-01T00:00:01Z.
        ("one-1904.mp4", modifiedText, .quickTime(1)),
        // All ones, a clock never set: ffmpeg reads 2040-02-06T06:28:15Z (the "newest" item).
        ("all-ones.mp4", modifiedText, .quickTime(.max)),
        // 2033-05-18T03:33:20Z: after the file was last written, so not when it was recorded.
        ("future.mp4", modifiedText, .quickTime(quickTimeEpoch + 2_000_000_000)),
        // 2017-07-14T02:40:00Z, before the file time: a capture time.
        ("dated.mp4", "2017-07-14T02:40:00+00:00", .quickTime(quickTimeEpoch + 1_500_000_000)),
        // Six hours after the file time (a camera writing local time as UTC): still taken.
        ("local-as-utc.mp4", "2024-06-07T14:09:10+00:00", .quickTime(quickTimeEpoch + 1_717_747_750 + 6 * 3600)),
        ("webm-1970.webm", modifiedText, .ffmpeg("vp9.webm", ["-metadata", "creation_time=1970-01-01T00:00:00Z"])),
        ("webm-dated.webm", "2015-05-05T05:05:05+00:00", .ffmpeg("vp9.webm", ["-metadata", "creation_time=2015-05-05T05:05:05Z"])),
        ("apple-garbage.mov", modifiedText, .ffmpeg("short.mp4", ["-movflags", "use_metadata_tags",
                                                                  "-metadata", "com.apple.quicktime.creationdate=garbage"])),
        // Apple's date all zeros beside a good creation_time: the creation_time.
        ("apple-zeros.mov", "2015-05-05T05:05:05+00:00",
         .ffmpeg("short.mp4", ["-movflags", "use_metadata_tags", "-metadata", "com.apple.quicktime.creationdate=0000-00-00T00:00:00Z",
                               "-metadata", "creation_time=2015-05-05T05:05:05Z"])),
        ("apple-dated.mov", "2022-03-04T05:06:07+09:00", .copy("iphone.mov")),
    ]

    enum Make {
        /// A fixture clip as it is.
        case copy(String)
        /// `short.mp4` with every `mvhd` and `mdhd` creation and modification time (version 0,
        /// 32 bits) set to this many seconds since 1904-01-01.
        case quickTime(UInt32)
        /// `ffmpeg -i <fixture> -c copy <arguments> <file>`.
        case ffmpeg(String, [String])
    }

    static func make(_ make: Make, at path: String) throws {
        switch make {
        case .copy(let fixture):
            try FileManager.default.copyItem(atPath: VideoFixtures.path(fixture), toPath: path)
        case .quickTime(let seconds):
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: VideoFixtures.path("short.mp4"))))
            var patched = 0
            for box in ["mvhd", "mdhd"].map({ Array($0.utf8) }) {
                for i in 0..<(bytes.count - 16) where Array(bytes[i..<i + 4]) == box {
                    #expect(bytes[i + 4] == 0, "a version 1 box")
                    for field in [8, 12] {   // after type(4), version(1), flags(3): creation, modification
                        for k in 0..<4 { bytes[i + field + k] = UInt8(truncatingIfNeeded: seconds >> (24 - 8 * UInt32(k))) }
                    }
                    patched += 1
                }
            }
            #expect(patched == 2)   // one movie header, one video track's media header
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        case .ffmpeg(let fixture, let arguments):
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            process.arguments = ["-y", "-loglevel", "error", "-i", VideoFixtures.path(fixture), "-c", "copy"] + arguments + [path]
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "ffmpeg \(arguments)")
        }
    }

    @Test func aVideoIsTakenWhenItsContainerSaysElseAtItsFileTime() throws {
        let dir = TemporaryDirectory("thumbd-video-taken")
        for (name, _, make) in Self.cases {
            let path = dir.path + "/" + name
            try Self.make(make, at: path)
            var times = [timespec(tv_sec: Self.modified, tv_nsec: 0), timespec(tv_sec: Self.modified, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        }
        let database = dir.path + "-index.sqlite"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { unlink(database + suffix) } }
        let index = try LibraryIndex(library: try Library(root: dir.path), databasePath: database)
        _ = index.rescan()
        let items = index.listing(order: .newest, offset: 0, limit: 100).items
        var taken: [String: String] = [:]
        for item in items { taken[item.path.description] = item.taken.iso8601 }
        for (name, expected, _) in Self.cases {
            #expect(taken[name] == expected, "\(name)")
        }
        #expect(items.count == Self.cases.count)
        #expect(items.filter(\.isVideo).count == Self.cases.count)
    }
}
