import CVideoShim
import CVipsShim

/// The versions of the image and video libraries thumbd runs with, read from the libraries
/// loaded at run time (not the headers it was built against): after Debian updates libvips or
/// FFmpeg, `thumbd --version`, `/stats` and `/metrics` name the new one without a rebuild.
public enum RuntimeLibraries {
    /// libvips' `vips_version_string()`, e.g. `8.14.1`. Needs no `Vips.start`.
    public static var libvips: String { String(cString: cvips_version()) }

    /// FFmpeg's `av_version_info()` (libavutil), e.g. `5.1.6-0+deb12u1` on Debian 12.
    public static var ffmpeg: String { String(cString: cvideo_ffmpeg_version()) }

    /// libavformat's `avformat_version()` as major.minor.micro, e.g. `59.27.100` (FFmpeg 5.1).
    public static var libavformat: String {
        var buffer = [CChar](repeating: 0, count: 32)
        cvideo_avformat_version(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
