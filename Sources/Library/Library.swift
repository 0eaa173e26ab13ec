import Foundation
import Rendering
#if canImport(Glibc)
import Glibc
#endif

/// A source file found inside the library.
public struct ResolvedAsset: Sendable, Equatable {
    /// The asset path, `/`-separated, spelled as on disk byte for byte (NFD where the disk has
    /// NFD, perhaps not UTF-8): what the cache key is made from, so every URL spelling that
    /// reaches one file is one entry, and two files whose names differ only in Unicode form
    /// are two.
    public var assetPath: DiskPath
    /// The absolute path on disk, as spelled on disk, with symlinks resolved.
    public var absolutePath: DiskPath
    /// `absolutePath` relative to the root: the file the asset path reaches, every symlink
    /// followed (what `LibraryScope` judges).
    public var realPath: DiskPath
    /// The path as reached from the root, before symlinks are resolved: what a later check of
    /// "is this asset path still that file" must `stat` (following links), so that a symlink
    /// removed, retargeted or replaced is noticed as well as a replaced file.
    public var requestedPath: DiskPath
    /// The file's size and modification time when resolved.
    public var identity: SourceIdentity
    /// Which file it was when resolved (`st_dev`, `st_ino`): `requestedPath` reaching another
    /// file later (a link pointed elsewhere, perhaps outside the root) must be resolved again.
    public var device: UInt64
    /// The file's `st_ino` when resolved (with `device`, which file it was).
    public var inode: UInt64
}

/// Why an asset path does not name a servable file.
public enum LibraryError: Error, Sendable, Equatable {
    /// Not there, a dot-file, or a directory (404).
    case notFound
    /// A symlink that resolves outside the root (404 for a GET: never read, never revealed).
    case outsideRoot
    /// There, but not a regular file: a FIFO, socket or device (415, answered without opening it).
    case notRegularFile
    /// A directory on the way cannot be searched by the server's user (EACCES or EPERM): what
    /// lies below may well be there (403, as for a source the server may not read).
    case forbidden
    /// The file is there, but the server's user may not read it (EACCES or EPERM; e.g. `chmod
    /// 000` to hide a photo): 403, and what was made of it (a placeholder) is forgotten. Its
    /// asset path as on disk.
    case unreadable(DiskPath)
    /// A directory on the way had to be listed (a name in another Unicode form) and no file
    /// descriptor was free to open it (EMFILE, ENFILE): nothing is known about the name yet
    /// (503 with `Retry-After`, not 404).
    case outOfDescriptors
}

/// The library root and the rules for reaching files under it (docs/API.md, "Thumbnails"): nothing
/// outside the root is ever read — not through `..`, absolute paths or symlinks that resolve
/// outside — and dot-files are not served. A name is looked up byte for byte first: the name on
/// disk that matches the request exactly always wins. Only when there is none does a UTF-8 name
/// find another spelling of itself (NFC finds NFD on disk and the other way round). A name that
/// is not UTF-8 is found by its exact bytes only.
public struct Library: Sendable {
    /// The root as given, made absolute and with symlinks resolved.
    public let root: String
    /// `root`'s bytes.
    public let rootPath: DiskPath

    /// - Throws: `LibraryError.notFound` when `root` is not a readable directory.
    public init(root: String) throws(LibraryError) {
        guard let real = realpath(root, nil) else { throw .notFound }
        defer { free(real) }
        let resolved = String(cString: real)
        var st = stat()
        guard stat(resolved, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, access(resolved, R_OK | X_OK) == 0 else {
            throw .notFound
        }
        self.root = resolved
        rootPath = DiskPath(resolved)
    }

    /// Finds the file for decoded path `segments` (each already percent-decoded once), given as
    /// text.
    public func resolve(_ segments: [String]) throws(LibraryError) -> ResolvedAsset {
        try resolve(names: segments.map { Array($0.utf8) })
    }

    /// Finds the file for decoded path `names` (each already percent-decoded once), given as
    /// bytes, which need not be UTF-8.
    /// - Throws: `.notFound` (missing, empty, a dot-file, a directory, a name with `/` or NUL),
    ///   `.outsideRoot`, `.notRegularFile`, `.unreadable` (the file the server may not read),
    ///   `.forbidden` (a directory on the way the server may
    ///   not search), `.outOfDescriptors` (a directory that had to be listed could not be opened
    ///   for want of a descriptor).
    public func resolve(names: [[UInt8]]) throws(LibraryError) -> ResolvedAsset {
        guard !names.isEmpty else { throw .notFound }
        var path = rootPath
        var onDisk: [UInt8] = []
        // The directories on the way (device, inode; links followed), as the listing's walk
        // keeps them: a URL that comes back to one (`sub/self -> .`, `up -> ..`) names nothing,
        // so a loop of links cannot spell one file in ever more ways (each its own cache key).
        var onTheWay: [DirectoryIdentity] = []
        if names.count > 1, let root = DirectoryIdentity(of: rootPath) { onTheWay.append(root) }
        for (index, name) in names.enumerated() {
            guard Self.isServableName(name), !name.contains(UInt8(ascii: "/")), !name.contains(0) else { throw .notFound }
            let found = try diskName(of: name, in: path)
            path = path.appending(found)
            if !onDisk.isEmpty { onDisk.append(UInt8(ascii: "/")) }
            onDisk += found
            if index < names.count - 1, let directory = DirectoryIdentity(of: path) {
                guard !onTheWay.contains(directory) else { throw .notFound }
                onTheWay.append(directory)
            }
        }
        let resolved: DiskPath, st: stat
        switch target(of: path) {
        case .file(let real, let status): (resolved, st) = (real, status)
        case .directory, .missing, .hidden: throw .notFound
        case .other: throw .notRegularFile
        case .outside: throw .outsideRoot
        }
        // A file the server's user may not read is refused here, not only when a render opens
        // it: else a thumbnail cached before a `chmod 000` would still be served from the cache.
        if resolved.withCString({ faccessat(AT_FDCWD, $0, R_OK, AT_EACCESS) }) != 0 && (errno == EACCES || errno == EPERM) {
            throw .unreadable(DiskPath(bytes: onDisk))
        }
        return ResolvedAsset(assetPath: DiskPath(bytes: onDisk), absolutePath: resolved,
                             realPath: DiskPath(bytes: resolved.bytes.dropFirst(rootPath.count + 1)),
                             requestedPath: path, identity: SourceIdentity(st),
                             device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// What a path under the root leads to with its symlinks followed (`realpath`, then `stat`).
    public enum Target {
        /// A regular file inside the root: an asset. Its real path and `stat`.
        case file(DiskPath, stat)
        /// A directory inside the root: its files are assets (listed by a walk, reached by URLs).
        case directory(DiskPath, stat)
        /// Inside the root, but a FIFO, socket or device: never an asset.
        case other
        /// Resolves outside the root: never read, never listed.
        case outside
        /// Resolves to a dot-file or into a dot-directory inside the root (`.hidden.jpg`,
        /// `.trash/a.jpg`): judged by the resolved path, as a URL naming it is, so it is never
        /// served (404) nor listed (docs/API.md: dot-files are not served).
        case hidden
        /// Nothing there (a dangling link), or it cannot be looked at.
        case missing
    }

    /// What `path` (under the root, perhaps through symlinks) leads to: the one rule for which
    /// files are assets, shared by `resolve` (a URL's path) and `LibraryIndex`'s walk (the
    /// listing, for each symlink it meets). Symlinks may point anywhere: only what resolves
    /// under the root counts, a link to a file or a directory alike, and only when no name of
    /// the resolved path below the root is a dot-name (`isServableName`).
    public func target(of path: DiskPath) -> Target {
        guard let real = path.withCString({ realpath($0, nil) }) else { return .missing }
        let resolved = DiskPath(cString: real)
        free(real)
        guard resolved.isInside(rootPath) else { return .outside }
        let below = resolved.bytes.dropFirst(rootPath.count + 1)
        guard below.split(separator: UInt8(ascii: "/")).allSatisfy({ Self.isServableName(Array($0)) }) else { return .hidden }
        var st = stat()
        guard resolved.withCString({ stat($0, &st) }) == 0 else { return .missing }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return .file(resolved, st)
        case S_IFDIR: return .directory(resolved, st)
        default: return .other
        }
    }

    /// Whether a name on the way to an asset may be served and listed: not empty, not a
    /// dot-file (`.`, `..`, `.hidden`).
    public static func isServableName(_ name: [UInt8]) -> Bool {
        guard let first = name.first else { return false }
        return first != UInt8(ascii: ".")
    }

    /// The spelling of `name` that exists in `directory`: exactly as given, when the directory
    /// holds that name byte for byte; else, for a UTF-8 name, its NFC or NFD form, else the
    /// first (in byte order) of the entries canonically equal to it (Swift `String` equality is
    /// canonical equivalence). A name that is not UTF-8 has no other spelling. An ASCII name
    /// has none either (but for `;` and `` ` ``, which U+037E and U+1FEF decompose to), so a
    /// missing one costs one `lstat`, not a listing of the directory, which a client could
    /// otherwise make the server do for every request.
    private func diskName(of name: [UInt8], in directory: DiskPath) throws(LibraryError) -> [UInt8] {
        var st = stat()
        if directory.appending(name).withCString({ lstat($0, &st) }) == 0 { return name }
        // The directory may not be searched: nothing can be said of what is in it but that.
        if errno == EACCES || errno == EPERM { throw .forbidden }
        if name.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "`") }) { throw .notFound }
        guard let text = String(validating: name, as: UTF8.self) else { throw .notFound }
        for variant in [text.precomposedStringWithCanonicalMapping, text.decomposedStringWithCanonicalMapping]
        where !variant.utf8.elementsEqual(name) {
            let bytes = Array(variant.utf8)
            if directory.appending(bytes).withCString({ lstat($0, &st) }) == 0 { return bytes }
        }
        guard let entries = Self.names(in: directory) else {
            throw errno == EMFILE || errno == ENFILE ? .outOfDescriptors : .notFound
        }
        let matches = entries.filter { entry in String(validating: entry, as: UTF8.self).map { $0 == text } ?? false }
        guard let match = matches.min(by: { $0.lexicographicallyPrecedes($1) }) else { throw .notFound }
        return match
    }

    /// The names in `directory` as bytes (`.` and `..` left out), or nil (errno set by
    /// `opendir`) when it cannot be read.
    static func names(in directory: DiskPath) -> [[UInt8]]? {
        guard let dir = directory.withCString({ opendir($0) }) else { return nil }
        defer { closedir(dir) }
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = direntName(entry)
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            names.append(name)
        }
        return names
    }

    /// `d_name` of a `readdir` record, read in place: the record may be shorter than
    /// `struct dirent`, so copying the 256-byte array out of it reads past its end (found by
    /// AddressSanitizer).
    static func direntName(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        let start = UnsafeRawPointer(entry).advanced(by: MemoryLayout<dirent>.offset(of: \dirent.d_name)!)
            .assumingMemoryBound(to: UInt8.self)
        return Array(UnsafeBufferPointer(start: start, count: strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self))))
    }
}
