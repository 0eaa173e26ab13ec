import Library
import Rendering

/// One thumbnail to produce: its key and the resolved source file.
public struct ThumbnailRequest: Sendable {
    public var key: CacheKey
    /// Absolute path of the source (bytes, as on disk), already resolved inside the library.
    public var source: DiskPath
    /// The source's `st_dev` and `st_ino` when resolved (0 when not known): with the path and
    /// the key's size and mtime, which file a remembered failure belongs to.
    public var device: UInt64
    public var inode: UInt64

    /// A request for `key`, rendered from `source`.
    public init(key: CacheKey, source: DiskPath, device: UInt64 = 0, inode: UInt64 = 0) {
        self.key = key
        self.source = source
        self.device = device
        self.inode = inode
    }

    /// The request for `key`'s thumbnail of the file `asset` resolved to.
    public init(key: CacheKey, asset: ResolvedAsset) {
        self.init(key: key, source: asset.absolutePath, device: asset.device, inode: asset.inode)
    }

    var failureSource: KnownFailures.Source {
        KnownFailures.Source(path: source, device: device, inode: inode, identity: key.source)
    }
}
