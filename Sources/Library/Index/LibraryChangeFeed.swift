import Rendering

/// What `LibraryIndex.follow` hears of changes under the library root: `LibraryWatch` (inotify),
/// or a stand-in in tests.
public protocol LibraryChangeFeed: AnyObject, Sendable {
    /// Registers `handler`, called (on any thread, perhaps often) whenever changes may be
    /// waiting in `takeChanges()`. Called once, before any change is taken.
    func onChanges(_ handler: @escaping @Sendable () -> Void)
    /// The paths (relative to the root, as on disk) at which something changed since the last
    /// call: a file written, created, deleted or renamed from or to there, a directory made,
    /// moved or deleted there (its whole subtree). Nil when the feed lost track of some
    /// changes (an overflow, the root replaced, a directory it could not watch): then only a
    /// scan of the whole tree is sure.
    func takeChanges() -> [DiskPath]?
    /// Whether the feed sees every change in the tree now (false while a directory cannot be
    /// watched, or the watch has given up): while it does not, the index polls.
    var seesEverything: Bool { get }
}
