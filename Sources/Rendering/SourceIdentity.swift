#if canImport(Glibc)
import Glibc
#endif

/// The identity of a source file as seen by `stat(2)`: a replaced file (new size or new
/// modification time) gets new cache keys, so its old thumbnails are never served.
public struct SourceIdentity: Sendable, Hashable {
    /// File size, bytes.
    public var size: Int
    /// Modification time, ns since the epoch (`st_mtim`).
    public var modifiedNanoseconds: Int64

    public init(size: Int, modifiedNanoseconds: Int64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    /// The identity in a `stat` result.
    public init(_ st: stat) {
        self.init(size: Int(st.st_size), modifiedNanoseconds: st.st_mtim.nanoseconds)
    }
}
