#if canImport(Glibc)
import Glibc
#endif

/// What a file starts with, read without side effects: how thumbd tells its own files (cache
/// entries by `DiskEntry.magic`, the index database by SQLite's header) from anything else
/// found where they would be.
public enum FileHead {
    /// Whether `path` is a regular file (not followed when a link; a FIFO is not waited on)
    /// that is empty or whose first bytes are `prefix`. False when it cannot be opened or read.
    public static func starts(_ path: String, with prefix: [UInt8]) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        guard st.st_size > 0 else { return true }
        var head = [UInt8](repeating: 0, count: prefix.count)
        return pread(fd, &head, head.count, 0) == head.count && head == prefix
    }
}
