import Foundation

/// A fresh directory under /tmp, removed when the test's value goes away.
public final class TemporaryDirectory {
    /// The directory's absolute path.
    public let path: String

    /// Creates `<tmp>/<name>-<UUID>`.
    public init(_ name: String = "thumbd-test") {
        path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` to `relative` under the directory, creating the directories on the way.
    public func write(_ relative: String, _ bytes: [UInt8]) {
        let full = path + "/" + relative
        try! FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: full, contents: Data(bytes))
    }
}
