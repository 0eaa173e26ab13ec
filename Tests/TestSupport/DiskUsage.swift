import Foundation

/// What files occupy on disk, as `du` counts it: `st_blocks` x 512 of the regular files (not
/// followed through links) under directories, recursively.
public enum DiskUsage {
    /// Bytes the regular files under each of `directories` occupy (a missing directory: 0).
    public static func bytes(under directories: [String]) -> Int {
        directories.reduce(0) { total, directory in
            let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
            return files.reduce(total) { total, file in
                var st = stat()
                guard lstat(directory + "/" + file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return total }
                return total + Int(st.st_blocks) * 512
            }
        }
    }

    /// Bytes a disk cache's files occupy: its `entries/` and `tmp/` (what `disk_cache_bytes`
    /// bounds, docs/cache.md).
    public static func cacheBytes(_ cache: String) -> Int {
        bytes(under: [cache + "/entries", cache + "/tmp"])
    }
}
