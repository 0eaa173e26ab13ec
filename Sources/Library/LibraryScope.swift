import Rendering

/// The part of the library a client sees: one folder (a client key's `prefix`, docs/API.md,
/// "Private libraries"), or all of it. The one rule of what such a client may list, be handed a
/// thumbnail URL of, and prefetch (`contains(path:realPath:)`), judged on the file a path
/// reaches, every symlink followed: it is in the scope when both the path it is listed or named
/// by and its real path (relative to the root) lie under the folder. So a symlink in the folder
/// that leads out of it, to a file or a directory, is not in the scope; one that leads elsewhere
/// in the folder is; and nothing outside the folder is, whatever it links to.
/// Applied by `LibraryIndex.page(order:from:limit:in:)` (the listing, and so its totals, cursors,
/// signed thumbnail URLs and range prefetches) and to a prefetch's named paths once
/// `Library.resolve` has found them (`contains(_:)`).
public struct LibraryScope: Sendable, Hashable {
    /// The folder, as `/`-separated names byte for byte as on disk; empty for the whole library.
    public let folder: [[UInt8]]
    /// `folder` joined by `/`, plus a trailing `/`: what a path under it starts with.
    private let start: [UInt8]

    /// The whole library: every path is in it.
    public static let whole = LibraryScope(folder: [])

    public init(folder: [[UInt8]]) {
        self.folder = folder
        start = folder.isEmpty ? [] : Array(folder.joined(separator: [UInt8(ascii: "/")])) + [UInt8(ascii: "/")]
    }

    /// Whether the scope is the whole library (no folder).
    public var isWhole: Bool { folder.isEmpty }

    /// The rule: whether the file listed or named as `path` whose real path is `realPath` (both
    /// relative to the root, `/`-separated, as on disk) is in the scope.
    public func contains(path: some Collection<UInt8>, realPath: some Collection<UInt8>) -> Bool {
        isWhole || (isUnderFolder(path) && isUnderFolder(realPath))
    }

    /// Whether a file `Library.resolve` found is in the scope (`contains(path:realPath:)`).
    public func contains(_ asset: ResolvedAsset) -> Bool {
        contains(path: asset.assetPath.bytes, realPath: asset.realPath.bytes)
    }

    /// Whether a path as a request names it (decoded names, before any lookup) lies under the
    /// folder: one that does not cannot be in the scope, so prefetch refuses it at once (403
    /// `outside_prefix`). Not enough by itself: where the path leads is judged by `contains`.
    public func mayName(_ names: [[UInt8]]) -> Bool {
        isWhole || (names.count > folder.count && zip(folder, names).allSatisfy { $0 == $1 })
    }

    private func isUnderFolder(_ path: some Collection<UInt8>) -> Bool {
        path.count > start.count && path.starts(with: start)
    }
}
