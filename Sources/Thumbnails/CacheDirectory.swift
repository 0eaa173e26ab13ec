import Foundation
import Library
import Rendering
#if canImport(Glibc)
import Glibc
#endif

/// What makes a directory thumbd's cache, and which files in it thumbd may delete: thumbd deletes
/// only what it can show it wrote, so a `cache_dir` pointed by mistake at photos or a home
/// directory loses nothing.
///
/// A cache directory carries `CACHEDIR.TAG`, written by thumbd, in the form of the Cache Directory
/// Tagging Specification (<https://bford.info/cachedir/>), which backup tools such as tar
/// (`--exclude-caches`), borg and restic honour. `claim` accepts a directory that is new, empty,
/// tagged by thumbd, or laid out exactly as an untagged cache of an earlier thumbd (it tags that
/// one); anything else is refused and left untouched.
public enum CacheDirectory {
    /// Why a directory cannot be the cache. `description` is one sentence naming the directory.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// The tag's file name (the specification's).
    public static let tagName = "CACHEDIR.TAG"
    /// The tag's first line, fixed by the specification.
    static let signature = "Signature: 8a477f597d28d172789f06886806bc55"
    /// The line that says thumbd wrote the tag: another program's tag does not make a directory ours.
    static let ownerLine = "# This file is a cache directory tag created by thumbd."
    static let tagContents = signature + "\n" + ownerLine + "\n"
        + "# For information about cache directory tags, see https://bford.info/cachedir/\n"

    /// The lock file one server at a time holds (`flock(2)`, thumbd's `CacheLock`), with its PID.
    public static let lockName = "thumbd.lock"

    /// The names thumbd makes at the top of its cache directory.
    static let topLevelNames: Set<String> = ["entries", "tmp", "index.sqlite", "index.sqlite-wal",
                                              "index.sqlite-shm", "index.sqlite-journal", tagName, lockName]

    /// Makes `path` thumbd's cache directory: creates it (and its parents) when missing, tags it
    /// when empty or laid out as an earlier thumbd's cache, accepts it when tagged by thumbd.
    /// Creates `entries/` and `tmp/` inside.
    /// - Throws: `Refusal` when `path` is not a directory, holds files thumbd did not make, or
    ///   cannot be created or tagged; nothing in it is changed then.
    public static func claim(_ path: String) throws(Refusal) {
        try claim(path, makingParents: true)
    }

    /// Makes the cache at `path` usable again after its directories vanished while thumbd ran (a
    /// tmp cleaner, a user clearing the cache): by `claim`'s rules, as at first start, except
    /// that a missing `path` is made only inside a directory that still exists (never a chain
    /// of parents: a whole tree gone is not the cache's to bring back), and only while it stays
    /// apart from the library at `library` (`overlap`; nil: no library to keep apart from).
    /// - Throws: `Refusal` as `claim` does, or naming the overlap, or when the directory above
    ///   `path` is gone; nothing is made or changed then.
    static func reclaim(_ path: String, library: String?) throws(Refusal) {
        if let library, let overlap = overlap(cache: path, library: library) {
            throw Refusal(description: overlap + "; thumbd does not make it again there")
        }
        try claim(path, makingParents: false)
    }

    /// `claim`, with `path` made with its parents (at start) or only inside an existing
    /// directory (`reclaim`).
    private static func claim(_ path: String, makingParents: Bool) throws(Refusal) {
        var st = stat()
        if stat(path, &st) != 0 {
            if makingParents {
                try makeWithParents(path)
            } else {
                if let refusal = refusalOfMissing(path) { throw refusal }
                if mkdir(path, 0o755) != 0 && errno != EEXIST {
                    throw Refusal(description: errno == ENOENT
                        ? "the directory that held the cache directory \(path) is gone too"
                        : "cannot create the cache directory \(path): \(String(cString: strerror(errno)))")
                }
            }
        }
        // mkdir(2) makes a directory or fails; what sits there now (another's, made since) is judged here.
        if let refusal = refusal(ofExisting: path) { throw refusal }
        if !isTagged(path) { try writeTag(in: path) }
        for sub in ["entries", "tmp"] {
            let subPath = path + "/" + sub
            if mkdir(subPath, 0o755) != 0 && errno != EEXIST {
                throw Refusal(description: "cannot create \(subPath): \(String(cString: strerror(errno)))")
            }
            // Not a link: thumbd writes and deletes inside these, and must stay in its own tree.
            guard lstat(subPath, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                throw Refusal(description: "\(subPath) in the cache directory is not a directory of thumbd's")
            }
        }
    }

    /// Why the directory at `path`, which exists, cannot be claimed as it is: it is not a
    /// directory, or it is not tagged by thumbd and holds a file an untagged cache of thumbd's
    /// would not (`foreignName`). Nil when `claim` takes it. Reads, changes nothing: the one
    /// judgement of `claim` and of `--check-config` (`check`).
    static func refusal(ofExisting path: String) -> Refusal? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            return Refusal(description: "the cache directory \(path) is not a directory")
        }
        guard !isTagged(path), let foreign = foreignName(in: path) else { return nil }
        return Refusal(description: "the cache directory \(path) holds files thumbd did not create "
            + "(\(foreign)); thumbd uses only a new or empty directory, or one it tagged with \(tagName), "
            + "so that it never deletes files of yours: choose another cache_dir")
    }

    /// Why `path`, which `stat` does not find, cannot be made: a symbolic link to nothing. Nil
    /// when `mkdir` may try.
    private static func refusalOfMissing(_ path: String) -> Refusal? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Refusal(description: "the cache directory \(path) is a symbolic link to something that does not exist")
    }

    /// Makes the missing directory `path` and the parents above it that are missing, as
    /// `mkdir -p` does (0755).
    /// - Throws: `Refusal` naming the first that cannot be made and why (`strerror`: `No such
    ///   file or directory` under /proc, `Permission denied`...), or the parent that is no
    ///   directory; the directories made before it are left for the caller (`unclaim`).
    static func makeWithParents(_ path: String) throws(Refusal) {
        if let refusal = refusalOfMissing(path) { throw refusal }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var missing: [String] = []
        var st = stat()
        for ancestor in ancestors(of: absolute) {
            guard stat(ancestor, &st) != 0 else {
                guard (st.st_mode & S_IFMT) == S_IFDIR else {
                    throw Refusal(description: "cannot create the cache directory \(path): \(ancestor) is not a directory")
                }
                break
            }
            missing.append(ancestor)
        }
        for directory in missing.reversed() where mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw Refusal(description: "cannot create the cache directory \(path): "
                + (directory == absolute ? "" : "cannot create \(directory): ") + String(cString: strerror(errno)))
        }
    }

    /// Why `cache` cannot serve beside a library at `root` (already resolved): it is the
    /// library, inside it, or contains it. Nil when they are apart. `cache` need not exist yet.
    public static func overlap(cache: String, library root: String) -> String? {
        let resolved = resolve(cache)
        if resolved == root { return "cache_dir \(cache) is the library itself" }
        if resolved.hasPrefix(root + "/") || root == "/" { return "cache_dir \(cache) is inside the library \(root)" }
        if root.hasPrefix(resolved == "/" ? "/" : resolved + "/") { return "cache_dir \(cache) contains the library \(root)" }
        // By device and inode too: a bind mount (or a container volume) gives one directory two
        // paths that no comparison of strings relates.
        guard let library = DirectoryIdentity(of: DiskPath(root)) else { return nil }
        let cacheItself = DirectoryIdentity(of: DiskPath(resolved))
        for (index, ancestor) in ancestors(of: resolved).enumerated() where DirectoryIdentity(of: DiskPath(ancestor)) == library {
            return index == 0 && cacheItself != nil ? "cache_dir \(cache) is the library itself (\(root), mounted at another path)"
                : "cache_dir \(cache) is inside the library \(root) (mounted at another path)"
        }
        if let cacheItself, ancestors(of: root).dropFirst().contains(where: { DirectoryIdentity(of: DiskPath($0)) == cacheItself }) {
            return "cache_dir \(cache) contains the library \(root) (mounted at another path)"
        }
        return nil
    }

    /// `path` and each directory above it, nearest first, up to `/`.
    static func ancestors(of path: String) -> [String] {
        var result = [path]
        var current = path
        while current != "/", let slash = current.lastIndex(of: "/") {
            current = slash == current.startIndex ? "/" : String(current[..<slash])
            result.append(current)
        }
        return result
    }


    /// Whether the file at `path` may be deleted as a cache entry or temporary file of thumbd's:
    /// a regular file (not a link, FIFO or directory) that starts with the whole entry magic
    /// (`DiskEntry.magic`; thumbd writes it first, in the same `write` as the rest), or is empty
    /// (it holds nothing to lose). The caller has checked the name has the cache's form.
    static func holdsEntry(_ path: String) -> Bool {
        FileHead.starts(path, with: DiskEntry.magic)
    }

    /// Deletes `path` when `holdsEntry` says it is thumbd's. An empty directory planted at an
    /// entry's name is removed too (it holds nothing); anything else is left as it is.
    /// Returns whether nothing is left at `path`.
    /// Nothing is removed through a shard that is not a real directory (a symlink planted in
    /// `entries/` would lead outside the cache).
    @discardableResult
    static func removeEntry(_ path: String) -> Bool {
        guard let slash = path.lastIndex(of: "/"), isRealDirectory(String(path[..<slash])) else { return false }
        if holdsEntry(path) { return unlink(path) == 0 || errno == ENOENT }
        var st = stat()
        guard lstat(path, &st) == 0 else { return errno == ENOENT }
        return (st.st_mode & S_IFMT) == S_IFDIR && rmdir(path) == 0
    }

    /// Whether `path` is a directory itself, not a symlink to one (`lstat`): thumbd writes and
    /// deletes only inside its own tree.
    static func isRealDirectory(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether `name` is an entry file's name: 32 lowercase hex digits (an XXH3-128 digest).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy(isHexDigit)
    }

    /// Whether `name` is a temporary file's name as `DiskCache.write` makes them: `<pid>-<n>.tmp`.
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasSuffix(".tmp") else { return false }
        let parts = name.dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 97 && c <= 102) }

    private static func isTagged(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path + "/" + tagName),
              let text = String(data: data, encoding: .utf8) else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.first == Substring(signature) && lines.contains(Substring(ownerLine))
    }

    private static func writeTag(in path: String) throws(Refusal) {
        let tag = path + "/" + tagName
        let fd = open(tag, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw Refusal(description: "cannot write \(tag): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(tagContents.utf8)
        let written = write(fd, bytes, bytes.count)
        guard close(fd) == 0, written == bytes.count else {
            unlink(tag)   // ours: made just now with O_EXCL
            throw Refusal(description: "cannot write \(tag)")
        }
    }

    /// The first name in `path` that an untagged cache of thumbd's would not hold, or nil when
    /// the directory is empty or laid out exactly as one: both `entries/` and `tmp/` (thumbd
    /// makes them together), nothing at the top but the names thumbd makes, `index.sqlite*`
    /// SQLite files (whose tables `LibraryIndex` checks before writing), `entries/` holding
    /// two-hex-digit shards of digest-named entry files, `tmp/` holding only temporary files.
    private static func foreignName(in path: String) -> String? {
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: path) else { return "unreadable" }
        if names.isEmpty { return nil }
        if let name = names.first(where: { !topLevelNames.contains($0) }) { return name }
        if names.contains(tagName) { return tagName + " written by another program" }
        guard names.contains("entries"), names.contains("tmp") else {
            return names.sorted().first { $0 != "entries" && $0 != "tmp" } ?? names[0]
        }
        var st = stat()
        for name in names where name.hasPrefix("index.sqlite") {
            let file = path + "/" + name
            guard lstat(file, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                  name == "index.sqlite" ? LibraryIndex.isDatabaseFile(file) : LibraryIndex.isDatabaseSideFile(file)
            else { return name }
        }
        guard let temporary = try? fm.contentsOfDirectory(atPath: path + "/tmp") else { return "tmp" }
        if let name = temporary.first(where: { !isTemporaryName($0) || !holdsEntry(path + "/tmp/" + $0) }) {
            return "tmp/" + name
        }
        guard let shards = try? fm.contentsOfDirectory(atPath: path + "/entries") else { return "entries" }
        for shard in shards {
            guard shard.utf8.count == 2, shard.utf8.allSatisfy(isHexDigit),
                  let files = try? fm.contentsOfDirectory(atPath: path + "/entries/" + shard) else {
                return "entries/" + shard
            }
            if let name = files.first(where: {
                !isEntryName($0) || !$0.hasPrefix(shard) || !holdsEntry(path + "/entries/" + shard + "/" + $0)
            }) {
                return "entries/" + shard + "/" + name
            }
        }
        return nil
    }

    /// `path` made absolute with symlinks resolved, as far as it exists; the rest appended with
    /// `.` and `..` applied as `mkdir -p` would.
    static func resolve(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var missing: [String] = []
        while true {
            let existing = (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
            if let real = realpath(existing.isEmpty ? "." : existing, nil) {
                var resolved = String(cString: real).split(separator: "/").map(String.init)
                free(real)
                for part in missing.reversed() {
                    if part == ".." { _ = resolved.popLast() } else if part != "." { resolved.append(part) }
                }
                return "/" + resolved.joined(separator: "/")
            }
            guard let last = parts.popLast() else { return path }   // "/" or "." always resolve
            missing.append(last)
        }
    }
}
