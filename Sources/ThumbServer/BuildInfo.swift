import CBuildInfo
import Rendering

/// What this thumbd is: its version and git commit, baked in at build time (the `CBuildInfo`
/// target's `THUMBD_VERSION` and `THUMBD_COMMIT`, given by packaging/build-deb.sh), and the
/// libvips and FFmpeg it runs with, read at run time (`RuntimeLibraries`). A plain `swift
/// build` bakes in neither: it is an unversioned build, which `--version` says in words
/// (found by an operator: it printed `dev`, which named no build). Printed by `thumbd
/// --version`; `/stats` `build` and `/metrics` `thumbd_build_info` carry it.
public struct BuildInfo: Sendable, Equatable {
    /// thumbd's version (packaging/VERSION), or `unversioned` when none was baked in.
    public var version: String
    /// The git commit built (12 hex digits, `-dirty` when the tree had changes), or `unknown`.
    public var commit: String
    /// libvips' version, e.g. `8.14.1`.
    public var libvips: String
    /// FFmpeg's version (`av_version_info()`), e.g. `5.1.6-0+deb12u1`.
    public var ffmpeg: String
    /// libavformat's version, e.g. `59.27.100`.
    public var libavformat: String

    /// The `version` of a build that had none baked in.
    public static let unversioned = "unversioned"

    /// This process's build and libraries.
    public static let current = BuildInfo(
        version: Self.baked(cbuildinfo_version()) ?? unversioned, commit: Self.baked(cbuildinfo_commit()) ?? "unknown",
        libvips: RuntimeLibraries.libvips, ffmpeg: RuntimeLibraries.ffmpeg, libavformat: RuntimeLibraries.libavformat)

    /// `thumbd --version`'s text: three lines, thumbd's version and commit first (for a build
    /// with none baked in, that it is an unversioned build and how to get one that is).
    public var versionText: String {
        let thumbd = version == Self.unversioned && commit == "unknown"
            ? "thumbd, an unversioned build (a plain swift build: no version or git commit was baked in; "
                + "packaging/build-deb.sh bakes in both)"
            : "thumbd \(version) (commit \(commit))"
        return thumbd + "\nlibvips \(libvips)\nFFmpeg \(ffmpeg) (libavformat \(libavformat))\n"
    }

    /// A C string from `CBuildInfo`; nil when it is empty (not baked in).
    private static func baked(_ text: UnsafePointer<CChar>) -> String? {
        let value = String(cString: text)
        return value.isEmpty ? nil : value
    }
}
