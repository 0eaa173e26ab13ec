import Foundation

/// Header facts from the `vipsheader` command (libvips-tools): an independent source of source
/// dimensions and orientation for expected sizes.
public enum VipsHeader {
    /// Width and height as displayed (EXIF orientation 5...8 swaps them).
    public static func displaySize(_ path: String) -> (width: Int, height: Int)? {
        guard let width = Int(field("width", path)), let height = Int(field("height", path)) else { return nil }
        let orientation = Int(field("orientation", path)) ?? 1
        return (5...8).contains(orientation) ? (height, width) : (width, height)
    }

    /// The `vipsheader -f name` of `path`, trimmed; empty when it cannot be read.
    public static func field(_ name: String, _ path: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/vipsheader")
        process.arguments = ["-f", name, path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
