import Rendering
#if canImport(Glibc)
import Glibc
#endif

/// A disk-cache entry kept open after one full check (magic, key, length, checksum), so later
/// hits are sent from it with `sendfile(2)`: no read into memory, no checksum per hit. The
/// descriptor closes when the last reference goes (the cache's table, or a response still
/// being written). A hit is served from it only while the entry's path shows the very same
/// file (`FileStamp`); anything else re-opens and re-checks.
public final class OpenDiskEntry: Sendable {
    /// Open read-only on the entry file.
    public let fd: Int32
    /// Where the image bytes start in the file, bytes.
    public let payloadOffset: Int
    /// Image bytes, from `payloadOffset`.
    public let payloadLength: Int
    public let format: ImageFormat
    /// Thumbnail size, px.
    public let width: Int
    public let height: Int

    init(fd: Int32, payloadOffset: Int, payloadLength: Int, format: ImageFormat, width: Int, height: Int) {
        self.fd = fd
        self.payloadOffset = payloadOffset
        self.payloadLength = payloadLength
        self.format = format
        self.width = width
        self.height = height
    }

    deinit { close(fd) }
}

/// What `stat(2)` says identifies a file's content: device, inode, size, mtime and ctime. A
/// rename over the path (new inode), an unlink (no stat), a truncation or a write (size, ctime)
/// all change it.
struct FileStamp: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int
    var modified: Int64
    var changed: Int64

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int(st.st_size)
        modified = st.st_mtim.nanoseconds
        changed = st.st_ctim.nanoseconds
    }
}
