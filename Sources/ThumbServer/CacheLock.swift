import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Thumbnails

/// One cache directory, one server: an exclusive `flock(2)` on `thumbd.lock` in the cache
/// directory, taken at start before the disk tier is scanned and held for the server's life
/// (the kernel drops it when the process ends, however it ends). A second server given the same
/// directory refuses to start, naming the process that holds it: the holder writes its PID into
/// the file (a PID of its own PID namespace: a server in another container names a process of
/// that container). Two servers on one cache would each delete the other's temporary files at
/// start and evict entries the other counts.
///
/// A cache thumbd may read but not write (a read-only copy) is locked through a read-only
/// descriptor when the file is there, and not at all when it cannot be made: such a cache is
/// never written, so sharing it is harmless.
public final class CacheLock: Sendable {
    /// The lock file's name in the cache directory.
    public static let fileName = CacheDirectory.lockName

    /// The lock file's path.
    public let path: String
    /// The descriptor holding the lock, or -1 (read-only cache without the file); closed once.
    private let descriptor: Mutex<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock of the cache directory `directory` (which exists): creates `thumbd.lock`
    /// when missing, locks it without waiting, and writes this process's PID into it.
    /// - Throws: `ConfigError` naming the process that holds the lock, or why the file cannot
    ///   be opened or locked.
    public static func acquire(directory: String) throws(ConfigError) -> CacheLock {
        let path = directory + "/" + fileName
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        var writable = fd >= 0
        if fd < 0 && (errno == EROFS || errno == EACCES) {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            writable = false
            if fd < 0 && errno == ENOENT { return CacheLock(path: path, descriptor: -1) }
        }
        guard fd >= 0 else {
            throw ConfigError("cache_dir \(directory): cannot open its lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let e = errno
            let holder = e == EWOULDBLOCK ? holderDescription(fd) : nil
            close(fd)
            if let holder {
                throw ConfigError("cache_dir \(directory) is in use by another thumbd (\(holder), holding \(path)); "
                    + "give each server a cache directory of its own")
            }
            throw ConfigError("cache_dir \(directory): cannot lock \(path): \(String(cString: strerror(e)))")
        }
        if writable {
            // Best effort: without the PID the lock still holds, and a refused server names no process.
            let text = Array("\(getpid())\n".utf8)
            if ftruncate(fd, 0) == 0 { _ = pwrite(fd, text, text.count, 0) }
        }
        return CacheLock(path: path, descriptor: fd)
    }

    /// Who holds the lock, from the PID it wrote: "process 1234, thumbd" (its command from
    /// /proc when visible), or "a process that wrote no PID".
    private static func holderDescription(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let pid = Int32(text), pid > 0 else { return "a process that wrote no PID" }
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return "process \(pid)" + (command.map { ", \($0)" } ?? "")
    }

    /// Lets the lock go (a server that stopped); later calls do nothing. The file stays, with
    /// the last holder's PID.
    public func release() {
        let fd = descriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
        if fd >= 0 { close(fd) }
    }

    deinit { release() }
}
