import Dispatch
import Rendering

/// The watch as the listing's change feed (`LibraryIndex.follow`): the paths its events name,
/// read as they come even while no request asks.
extension LibraryWatch: LibraryChangeFeed {
    /// Starts reading events as they come (a Dispatch read source on the inotify descriptor,
    /// on a queue of its own) and calls `handler` whenever they name changes. Events are named
    /// only from then on.
    public func onChanges(_ handler: @escaping @Sendable () -> Void) {
        instance.follow(handler)
    }

    /// The paths, relative to the root, that events named since the last call (a file or
    /// directory made, written, touched, deleted, or moved from or to there; a directory just
    /// walked for a watch, whose files may predate it; the empty path for the root); nil when
    /// some change could not be named (an overflow of the kernel's queue, an event in a
    /// directory still being walked, the root moved, deleted or back, the watch given up).
    public func takeChanges() -> [DiskPath]? {
        instance.takeChanges()
    }

    /// Whether every directory of the tree is watched (no directory that could not be, a root
    /// in place, not over the limit); a walk under way does not count. Reads what is queued
    /// first, and so also tries directories that could not be watched again when their retry
    /// is due (the listing asks every `index_rescan_seconds`, requests or not).
    public var seesEverything: Bool {
        _ = instance.readEvents()
        return instance.state.withLock { $0.unwatched.isEmpty && !$0.overLimit && !$0.rootMissing }
    }
}

extension Instance {
    func follow(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.changeHandler = handler }
        // A queue of its own: not the walks' (a walk of a big new directory would hold the
        // reader while `cp -r` fills the kernel's queue to overflow, and the listing would then
        // lose track and rescan everything).
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: eventQueue)
        source.setEventHandler { [weak self] in _ = self?.readEvents() }
        let old = reader.withLock { reader in
            defer { reader = EventReader(source: source) }
            return reader?.source
        }
        old?.cancel()
        source.resume()
    }

    func takeChanges() -> [DiskPath]? {
        let root = rootBytes
        return state.withLock { s -> [DiskPath]? in
            defer { s.changes = []; s.changesLost = false }
            if s.changesLost || s.overLimit { return nil }
            return s.changes.compactMap { path -> DiskPath? in
                if path == root { return DiskPath(bytes: []) }
                guard path.count > root.count + 1, path.starts(with: root), path[root.count] == UInt8(ascii: "/") else { return nil }
                return DiskPath(bytes: path[(root.count + 1)...])
            }
        }
    }
}

/// A Dispatch read source held under a lock: its methods may be called from any thread
/// (libdispatch's sources are thread-safe objects), which Swift cannot see.
struct EventReader: @unchecked Sendable {
    let source: DispatchSourceRead
}
