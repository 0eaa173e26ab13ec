import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `--check-config`'s question of a cache directory (`ConfigLoader.checked`): would a start
/// claim it, and could its disk tier keep entries there?
extension CacheDirectory {
    /// Why a start could not use `path` as its cache directory, by the start's own rules: a
    /// directory there must be one `claim` takes as it is (`refusal(ofExisting:)`: tagged by
    /// thumbd, empty, or laid out as an earlier thumbd's cache; never one holding files thumbd
    /// did not create), and a missing one must be makeable with its parents (`makeWithParents`,
    /// as `claim` makes them); then a file is created and renamed in its `tmp/` as the disk tier
    /// stores an entry (`DiskCache.tryStoring`). Everything this made (the directory, its
    /// parents, `tmp/`, the file) is removed again, each directory only while empty: the disk is
    /// left as it was found. Nil when a start could use it. Relative paths are taken from the
    /// working directory. Blocks on file I/O.
    public static func check(_ path: String) -> Refusal? {
        var st = stat()
        var madeFrom: String?
        if stat(path, &st) != 0 {
            madeFrom = topmostMissing(path)
            do {
                try makeWithParents(path)
            } catch {
                removeMade(path, upTo: madeFrom)
                return error
            }
        } else if let refusal = refusal(ofExisting: path) {
            return refusal
        }
        let temporary = path + "/tmp"
        var madeTemporary = false
        if lstat(temporary, &st) != 0 {
            guard mkdir(temporary, 0o755) == 0 else {
                let refusal = Refusal(description: "cannot create \(temporary): \(String(cString: strerror(errno)))")
                removeMade(path, upTo: madeFrom)
                return refusal
            }
            madeTemporary = true
        }
        // Not a link: thumbd writes and deletes inside its own tree only (`claim`'s rule).
        let refusal = isRealDirectory(temporary)
            ? DiskCache.tryStoring(through: temporary).map { Refusal(description: $0) }
            : Refusal(description: "\(temporary) in the cache directory is not a directory of thumbd's")
        if madeTemporary { rmdir(temporary) }
        removeMade(path, upTo: madeFrom)
        return refusal
    }

    /// Removes the directories `makeWithParents(path)` made, `path` first, up to `top` (the
    /// topmost that was missing; nil: none was), each only while it is empty.
    private static func removeMade(_ path: String, upTo top: String?) {
        guard let top else { return }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        for directory in ancestors(of: absolute) {
            guard rmdir(directory) == 0 || errno == ENOENT, directory != top else { break }
        }
    }
}
