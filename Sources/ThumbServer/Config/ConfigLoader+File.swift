import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension ConfigLoader {
    /// The bytes of the config file at `path` (`--config FILE`, or `defaultPath`), read with
    /// open(2) and read(2), so that a failure is told by its `errno`.
    /// - Throws: `ConfigError` saying why it cannot be read: `No such file or directory`,
    ///   `Permission denied`, `Is a directory`... (strerror(3)'s words, as nginx gives them).
    static func contents(ofConfigFile path: String) throws(ConfigError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw cannotRead(path, errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw cannotRead(path, errno) }   // EISDIR for a directory
            if n == 0 { return bytes }
            bytes += chunk[..<n]
        }
    }

    private static func cannotRead(_ path: String, _ failure: Int32) -> ConfigError {
        ConfigError("cannot read the config file \(path): \(String(cString: strerror(failure)))")
    }
}
