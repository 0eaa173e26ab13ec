import CBuildInfo
import Rendering

/// What this thumbd is: its version and git commit, baked in at build time (the `CBuildInfo`
/// target's `THUMBD_VERSION` and `THUMBD_COMMIT`, given by packaging/build-deb.sh; `dev` and
/// `unknown` for a plain `swift build`), and the libvips and FFmpeg it runs with, read at run
/// time (`RuntimeLibraries`). Printed by `thumbd --version`; `/stats` `build` and `/metrics`
/// `thumbd_build_info` carry it.
public struct BuildInfo: Sendable, Equatable {
    /// thumbd's version (packaging/VERSION), or `dev`.
    public var version: String
    /// The git commit built (12 hex digits, `-dirty` when the tree had changes), or `unknown`.
    public var commit: String
    /// libvips' version, e.g. `8.14.1`.
    public var libvips: String
    /// FFmpeg's version (`av_version_info()`), e.g. `5.1.6-0+deb12u1`.
    public var ffmpeg: String
    /// libavformat's version, e.g. `59.27.100`.
    public var libavformat: String

    /// This process's build and libraries.
    public static let current = BuildInfo(
        version: String(cString: cbuildinfo_version()), commit: String(cString: cbuildinfo_commit()),
        libvips: RuntimeLibraries.libvips, ffmpeg: RuntimeLibraries.ffmpeg, libavformat: RuntimeLibraries.libavformat)

    /// `thumbd --version`'s text: three lines, thumbd's version and commit first.
    public var versionText: String {
        "thumbd \(version) (commit \(commit))\nlibvips \(libvips)\nFFmpeg \(ffmpeg) (libavformat \(libavformat))\n"
    }
}
