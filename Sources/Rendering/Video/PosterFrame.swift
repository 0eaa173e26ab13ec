import CVideoShim

/// A video's decoded poster frame: packed 8-bit RGB, rows of exactly `width * 3` bytes, at
/// its display width (the sample aspect ratio applied in the helper) but not rotated, owned
/// until the value goes away (`cvideo_frame_free`).
struct PosterFrame: ~Copyable {
    var frame: cvideo_frame

    /// Width as displayed before rotation (stored width x sample aspect ratio), px.
    var width: Int { Int(frame.width) }
    /// Height as stored (and displayed before rotation), px.
    var height: Int { Int(frame.height) }
    /// The display matrix' rotation as the EXIF orientation that shows it upright: 1 (none),
    /// 6 (90° clockwise), 3 (180°), 8 (270° clockwise).
    var orientation: Int { SourceInfo.orientation(clockwiseRotation: Int(frame.rotation)) }
    /// Presentation time of the frame chosen, ms from the stream's start.
    var timeMilliseconds: Int { Int(frame.time_ms) }

    deinit {
        var frame = frame
        cvideo_frame_free(&frame)
    }
}
