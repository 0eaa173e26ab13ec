/// Which files are videos (README "Videos"): decided by the name's extension, case-insensitive,
/// before any byte is read, so that a photo is never handed to FFmpeg nor a video to libvips.
public enum VideoFormats {
    /// `mp4`, `mov` (QuickTime, iPhone HEVC), `m4v`, `webm` and `avi`: the containers FFmpeg reads
    /// here (the shim's container list, cvideo_input.c).
    public static let extensions: Set<String> = ["mp4", "mov", "m4v", "webm", "avi"]

    /// Whether `path`'s last segment ends in one of `extensions` (and is more than the extension).
    public static func isVideo(_ path: DiskPath) -> Bool {
        let bytes = path.bytes
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")),
              !bytes[bytes.index(after: dot)...].contains(UInt8(ascii: "/")),
              dot > bytes.startIndex, bytes[bytes.index(before: dot)] != UInt8(ascii: "/") else { return false }
        let suffix = bytes[bytes.index(after: dot)...]
        guard suffix.count <= 4, suffix.allSatisfy({ $0 < 0x80 }) else { return false }
        return extensions.contains(String(decoding: suffix, as: UTF8.self).lowercased())
    }
}
