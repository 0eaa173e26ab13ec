#if canImport(Glibc)
import Glibc
#endif
import Rendering

/// A directory's device and inode: what tells one directory reached again by another path (a
/// symlink back up the tree, a bind mount), where no comparison of path strings can.
public struct DirectoryIdentity: Sendable, Equatable {
    public let device: UInt64, inode: UInt64

    /// The identity in a `stat` result (the caller has checked it is a directory).
    public init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    /// The identity of the directory at `path`, links followed; nil when there is none there
    /// or it is not a directory.
    public init?(of path: DiskPath) {
        var st = stat()
        guard path.withCString({ stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
        self.init(st)
    }
}
