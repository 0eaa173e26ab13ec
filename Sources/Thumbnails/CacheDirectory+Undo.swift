import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Undoing a `claim` when the start that made the cache directory fails after it (thumbd's
/// start-up, `Thumbd.Resources.open`): a failed start leaves nothing on disk, and deletes
/// nothing it did not make.
extension CacheDirectory {
    /// The highest directory `claim(path)` would create: the topmost of `path` and its parents
    /// that does not exist (all below it are missing too); nil when `path` exists. Relative
    /// paths are taken from the working directory, as `claim` takes them.
    public static func topmostMissing(_ path: String) -> String? {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var st = stat()
        guard lstat(absolute, &st) != 0 else { return nil }
        var missing = absolute
        for ancestor in ancestors(of: absolute).dropFirst() {
            if lstat(ancestor, &st) == 0 { break }
            missing = ancestor
        }
        return missing
    }

    /// Removes what `claim` and a start made in the new directory `path`: the tag, the lock
    /// file, the index's files, then `entries/` and `tmp/`, `path` itself and its parents up to
    /// `top` (`topmostMissing` before the claim), each directory only while it is empty. A
    /// name thumbd does not make is never deleted, and keeps the directories above it.
    public static func unclaim(_ path: String, upTo top: String) {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        for name in topLevelNames.subtracting(["entries", "tmp"]).sorted() {
            unlink(absolute + "/" + name)
        }
        rmdir(absolute + "/entries")
        rmdir(absolute + "/tmp")
        for directory in ancestors(of: absolute) {
            guard rmdir(directory) == 0, directory != top else { break }
        }
    }
}
