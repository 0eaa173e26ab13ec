import Foundation
import Rendering
#if canImport(Glibc)
import Glibc
#endif

/// A source file found inside the library.
public struct ResolvedAsset: Sendable, Equatable {
    /// The asset path, `/`-separated, NFC (API.md, "asset path").
    public var assetPath: String
    /// The absolute path on disk, as spelled on disk (may be NFD), with symlinks resolved.
    public var absolutePath: String
    /// The path as reached from the root, before symlinks are resolved: what a later check of
    /// "is this asset path still that file" must `stat` (following links), so that a symlink
    /// removed, retargeted or replaced is noticed as well as a replaced file.
    public var requestedPath: String
    public var identity: SourceIdentity
    /// Which file it was when resolved (`st_dev`, `st_ino`): `requestedPath` reaching another
    /// file later (a link pointed elsewhere, perhaps outside the root) must be resolved again.
    public var device: UInt64
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
}

/// The library root and the rules for reaching files under it (API.md, "Thumbnails"): nothing
/// outside the root is ever read — not through `..`, absolute paths or symlinks that resolve
/// outside — dot-files are not served, and an NFC spelling finds an NFD name on disk and the
/// other way round.
public struct Library: Sendable {
    /// The root as given, made absolute and with symlinks resolved.
    public let root: String

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
    }

    /// Finds the file for decoded path `segments` (each already percent-decoded once).
    public func resolve(_ segments: [String]) throws(LibraryError) -> ResolvedAsset {
        guard !segments.isEmpty else { throw .notFound }
        var path = root
        var normalized: [String] = []
        normalized.reserveCapacity(segments.count)
        for segment in segments {
            guard !segment.isEmpty, !segment.hasPrefix("."), !segment.utf8.contains(0x2F), !segment.utf8.contains(0)
            else { throw .notFound }
            path += "/" + (try diskName(of: segment, in: path))
            normalized.append(segment.precomposedStringWithCanonicalMapping)
        }
        // Symlinks may point anywhere: only what resolves under the root is served.
        guard let real = realpath(path, nil) else { throw .notFound }
        let resolved = String(cString: real)
        free(real)
        guard resolved.hasPrefix(root + "/") else { throw .outsideRoot }
        var st = stat()
        guard stat(resolved, &st) == 0 else { throw .notFound }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw .notFound
        default: throw .notRegularFile
        }
        return ResolvedAsset(assetPath: normalized.joined(separator: "/"), absolutePath: resolved,
                             requestedPath: path, identity: SourceIdentity(st),
                             device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// The spelling of `name` that exists in `directory`: as given, else its NFC or NFD form,
    /// else any entry canonically equal to it (Swift `String` equality is canonical equivalence).
    /// An ASCII name has no other spelling (but for `;` and `` ` ``, which U+037E and U+1FEF
    /// decompose to), so a missing one costs one `lstat`, not a listing of the directory, which
    /// a client could otherwise make the server do for every request.
    private func diskName(of name: String, in directory: String) throws(LibraryError) -> String {
        var st = stat()
        if lstat(directory + "/" + name, &st) == 0 { return name }
        if name.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "`") }) { throw .notFound }
        for variant in [name.precomposedStringWithCanonicalMapping, name.decomposedStringWithCanonicalMapping]
        where !variant.utf8.elementsEqual(name.utf8) {
            if lstat(directory + "/" + variant, &st) == 0 { return variant }
        }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory),
              let match = entries.first(where: { $0 == name }) else { throw .notFound }
        return match
    }
}
