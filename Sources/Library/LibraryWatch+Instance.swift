import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One inotify instance watching the tree, shared by the watches of a group.
final class Instance: Sendable {
    struct State {
        /// Watch descriptor → the directory's path (bytes, as on disk: a name need not be
        /// UTF-8), for the paths of new subdirectories.
        var directories: [Int32: [UInt8]] = [:]
        var events = 0
        var rewalks = 0
        /// Directories that could not be watched or listed, by path, with the `errno` that said
        /// why (EACCES: the user may not read one; ENOSPC: `fs.inotify.max_user_watches`...):
        /// no stamps while there is any. Each is tried again (its subtree walked) when its
        /// parent reports a change of its metadata (a `chmod`), and every `retryInterval`.
        var unwatched: [[UInt8]: Int32] = [:]
        /// When the unwatched directories were last tried again, ns (`DispatchTime`).
        var lastRetry: UInt64 = 0
        /// The tree had more directories than `maxWatches`: every watch was given back, for good.
        var overLimit = false
        /// A walk runs in the background (`runWalks`).
        var walking = false
        /// Walks to run: the whole tree, and new directories' subtrees.
        var wholeTreePending = false
        var subtreesPending: [[UInt8]] = []
        /// The last walk of the whole tree found no directory at the root's path.
        var rootMissing = false
        /// Watches removed (`IN_IGNORED`) while a walk ran: not to be merged back from it.
        var ignoredDuringWalk: Set<Int32> = []
        /// When the last walk of the whole tree ended, ns (`DispatchTime`).
        var lastWalkEnded: UInt64 = 0
        /// Scratch space events are read into (64 KiB).
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// For the listing (`takeChanges`): absolute paths named by events since it last took
        /// them, and whether some change could not be named (the whole tree then).
        var changes: [[UInt8]] = []
        var changesLost = false
        /// An event came from a directory the running walk has watched but not yet named.
        var unnamedDuringWalk = false
        /// Told when `changes` has something (`onChanges`); nil while nobody follows them.
        var changeHandler: (@Sendable () -> Void)?

        /// Whether the watch can vouch for the whole tree: every directory watched and no walk
        /// under way or to come.
        var sighted: Bool {
            unwatched.isEmpty && !overLimit && !walking && !wholeTreePending && subtreesPending.isEmpty && !rootMissing
        }
    }

    /// Counts in steps of 8. Bit 0: events are being read; bit 1: the tree is not all watched;
    /// bit 2: over the limit, for good (with bit 1).
    let generation = Atomic<UInt64>(0)
    static let reading: UInt64 = 1
    static let blind: UInt64 = 2
    static let abandoned: UInt64 = 4
    static let flags: UInt64 = 7
    static let step: UInt64 = 8
    let fd: Int32
    let root: String
    let rootBytes: [UInt8]
    let maxWatches: Int
    /// How often directories that could not be watched are tried again, ns.
    let retryInterval: UInt64
    let state: Mutex<State>
    let queue = DispatchQueue(label: "thumbd.library-watch", qos: .utility)
    /// Where events are read while no request asks (`follow`), apart from the walks.
    let eventQueue = DispatchQueue(label: "thumbd.library-watch-events", qos: .utility)
    /// Reads events while no request asks, for the listing (`follow`); nil until then.
    let reader = Mutex<EventReader?>(nil)

    /// Watches the tree now (see `LibraryWatch.init(root:maxWatches:)`). Nil without an inotify
    /// instance.
    init(root: String, maxWatches: Int, retrySeconds: Double) throws(LibraryWatch.SetupError) {
        let fd = clinux_inotify()
        guard fd >= 0 else { throw LibraryWatch.SetupError(call: "inotify_init1", error: errno) }
        self.fd = fd
        self.root = root
        rootBytes = Array(root.utf8)
        self.maxWatches = max(0, maxWatches)
        retryInterval = UInt64(max(0, retrySeconds) * 1e9)
        let walk = Self.watchTree(rootBytes, fd: fd, limit: self.maxWatches)
        var initial = State()
        initial.directories = walk.directories
        initial.unwatched = walk.failures
        initial.rootMissing = !walk.rootWatched
        initial.lastWalkEnded = DispatchTime.now().uptimeNanoseconds
        initial.lastRetry = initial.lastWalkEnded
        if walk.overLimit { Self.giveUp(&initial, fd: fd) }
        state = Mutex(initial)
        generation.store(Self.next(after: 0, initial), ordering: .sequentiallyConsistent)
    }

    deinit {
        let fd = fd
        if let reader = reader.withLock({ $0?.source }) {
            reader.setCancelHandler { _ = Glibc.close(fd) }   // not while Dispatch still polls it
            reader.cancel()
        } else {
            _ = Glibc.close(fd)
        }
    }

    /// The generation after `g` (one step on) for what `s` says: blind unless the tree is all
    /// watched, abandoned once over the limit.
    static func next(after g: UInt64, _ s: State) -> UInt64 {
        let flags = s.overLimit ? blind | abandoned : s.sighted ? 0 : blind
        return ((g & ~Self.flags) &+ step) | flags
    }

    /// Over the limit: gives every watch back to the kernel, drops what the `IN_IGNORED` events
    /// that follow say, and walks nothing more.
    static func giveUp(_ s: inout State, fd: Int32) {
        for wd in s.directories.keys { _ = clinux_inotify_unwatch(fd, wd) }
        s.directories = [:]
        s.overLimit = true
        s.wholeTreePending = false
        s.subtreesPending = []
        s.ignoredDuringWalk = []
        s.buffer.withUnsafeMutableBytes { raw in
            while true {
                let n = read(fd, raw.baseAddress, raw.count)
                if n > 0 || (n < 0 && errno == EINTR) { continue }
                break
            }
        }
    }

    /// Reads what is queued, under the lock, and moves the generation on. While there is no
    /// root, also looks for one again (at most every 100 ms). Tells the change handler, after
    /// the lock, when events named changes.
    func readEvents() -> UInt64? {
        let (g, tell) = state.withLock { s -> (UInt64?, (@Sendable () -> Void)?) in
            let before = (s.changes.count, s.changesLost)
            let g = readEventsLocked(&s)
            let named = s.changes.count != before.0 || s.changesLost != before.1
            return (g, named ? s.changeHandler : nil)
        }
        tell?()
        return g
    }

    private func readEventsLocked(_ s: inout State) -> UInt64? {
        if clinux_unread_bytes(fd) > 0 {
            // Marked before `read` takes anything out of the queue: see `LibraryWatch`, point 3.
            let before = generation.load(ordering: .sequentiallyConsistent)
            generation.store(before | Self.reading, ordering: .sequentiallyConsistent)
            handle(&s)
            generation.store(Self.next(after: before, s), ordering: .sequentiallyConsistent)
        } else if s.rootMissing && !s.walking
                    && DispatchTime.now().uptimeNanoseconds &- s.lastWalkEnded > 100_000_000 {
            s.wholeTreePending = true
        } else if !s.unwatched.isEmpty && !s.walking && !s.overLimit
                    && DispatchTime.now().uptimeNanoseconds &- s.lastRetry >= retryInterval {
            // Permissions given back, watches freed by another program: nothing reports those.
            s.lastRetry = DispatchTime.now().uptimeNanoseconds
            s.subtreesPending += s.unwatched.keys.sorted { $0.lexicographicallyPrecedes($1) }
        }
        startWalks(&s)
        let g = generation.load(ordering: .sequentiallyConsistent)
        return g & Self.flags == 0 ? g : nil
    }

    /// Reads the queued events (up to 64 buffers' worth; any left are read by the next
    /// `stamp`) and decides what must be walked, off the request path:
    /// - a directory created: its subtree (`cp -r` or `tar x` may have filled it already);
    /// - a directory that could not be watched whose metadata changed (a `chmod` that may let
    ///   the server read it now): its subtree;
    /// - one created where the parent's path is not known yet (its watch comes from a walk
    ///   still under way), one moved in, out or within the tree (the watches of a moved subtree
    ///   keep their descriptors but have new paths; a tree moved out must stop being watched),
    ///   the root itself moved or deleted, or the kernel's queue overflowed (events lost): the
    ///   whole tree.
    private func handle(_ s: inout State) {
        var buffers = 0
        while buffers < 64 {
            buffers += 1
            let n = s.buffer.withUnsafeMutableBytes { raw -> Int in
                var n = read(fd, raw.baseAddress, raw.count)
                while n < 0 && errno == EINTR { n = read(fd, raw.baseAddress, raw.count) }
                guard n > 0 else { return n }
                var offset = 0
                // struct inotify_event: int wd; uint32_t mask, cookie, len; char name[len].
                while offset + 16 <= n {
                    let wd = raw.load(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.load(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self))
                    s.events += 1
                    if mask & clinux_inotify_overflow != 0 { s.wholeTreePending = true; s.changesLost = true }
                    // For the listing: the path the event names. One in a directory not known by
                    // path yet is in one the running walk has just watched (a `cp -r` fills it as it
                    // is walked): the subtree walked is named once the walk ends, which covers it
                    // (a walk of the whole tree then loses track). Too many waiting: track is lost.
                    if length > 0, s.changeHandler != nil {
                        if let parent = s.directories[wd], s.changes.count < 100_000 {
                            let name = UnsafeRawBufferPointer(rebasing: raw[(offset + 16)..<(offset + 16 + length)])
                            s.changes.append(parent + [UInt8(ascii: "/")] + name.prefix { $0 != 0 })
                        } else if s.directories[wd] == nil && s.walking {
                            s.unnamedDuringWalk = true
                        } else {
                            s.changesLost = true
                            s.changes = []
                        }
                    }
                    if mask & (clinux_inotify_move_self | clinux_inotify_delete_self | clinux_inotify_ignored) != 0,
                       s.directories[wd] == rootBytes {
                        s.wholeTreePending = true
                        s.changesLost = true
                    }
                    if mask & clinux_inotify_ignored != 0 {
                        s.directories[wd] = nil
                        if s.walking { s.ignoredDuringWalk.insert(wd) }
                    }
                    if mask & clinux_inotify_isdir != 0 {
                        if mask & (clinux_inotify_moved_from | clinux_inotify_moved_to) != 0 {
                            s.wholeTreePending = true
                        } else if mask & clinux_inotify_create != 0 {
                            if let parent = s.directories[wd], length > 0, !s.walking {
                                let name = UnsafeRawBufferPointer(rebasing: raw[(offset + 16)..<(offset + 16 + length)])
                                s.subtreesPending.append(parent + [UInt8(ascii: "/")] + name.prefix { $0 != 0 })
                            } else {
                                s.wholeTreePending = true
                            }
                        } else if mask & clinux_inotify_attrib != 0, let parent = s.directories[wd], length > 0 {
                            let name = UnsafeRawBufferPointer(rebasing: raw[(offset + 16)..<(offset + 16 + length)])
                            let path = parent + [UInt8(ascii: "/")] + name.prefix { $0 != 0 }
                            if s.unwatched[path] != nil { s.subtreesPending.append(path) }
                        }
                    }
                    offset += 16 + length
                }
                return n
            }
            if n <= 0 { break }
        }
    }

    /// Starts the background walker when there is something to walk. Under the lock.
    private func startWalks(_ s: inout State) {
        guard !s.walking, !s.overLimit, s.wholeTreePending || !s.subtreesPending.isEmpty else { return }
        s.walking = true
        queue.async { [self] in runWalks() }
    }

    /// Runs the pending walks one after another, off the request path, until none is left;
    /// then the generation moves on (and stamps come back, if the tree is all watched).
    /// Watches are added as each walk goes, but only known by path when it ends: an event in a
    /// directory it watched is handled as one with an unknown parent (the whole tree again).
    private func runWalks() {
        while true {
            let job = state.withLock { s -> (path: [UInt8], wholeTree: Bool, before: Set<Int32>)? in
                if s.wholeTreePending {
                    s.wholeTreePending = false
                    s.subtreesPending = []   // the whole tree covers them
                    return (rootBytes, true, Set(s.directories.keys))
                }
                if let path = s.subtreesPending.popLast() { return (path, false, []) }
                s.walking = false
                let g = generation.load(ordering: .sequentiallyConsistent)
                generation.store(Self.next(after: g, s), ordering: .sequentiallyConsistent)
                return nil
            }
            guard let job else { return }
            let walk = Self.watchTree(job.path, fd: fd, limit: maxWatches)
            let found = walk.directories
            let tell = state.withLock { s -> (@Sendable () -> Void)? in
                let named = (s.changes.count, s.changesLost)
                defer { if s.overLimit { s.changesLost = true } }
                defer { s.unnamedDuringWalk = false }
                if job.wholeTree {
                    if s.rootMissing && walk.rootWatched { s.changesLost = true }   // a root again: all of it is new
                    if s.unnamedDuringWalk { s.changesLost = true }   // no one path covers what it watched
                    // Watches from before the walk that it did not find again are of
                    // directories that left the tree (an old root, a tree moved out): dropped.
                    for (wd, _) in s.directories where job.before.contains(wd) && found[wd] == nil {
                        _ = clinux_inotify_unwatch(fd, wd)
                        s.directories[wd] = nil
                    }
                    s.rewalks += 1
                    s.rootMissing = !walk.rootWatched
                    s.unwatched = walk.failures
                    s.lastWalkEnded = DispatchTime.now().uptimeNanoseconds
                } else {
                    // Files made in it before its watch was in place: the listing looks again.
                    if s.changeHandler != nil { s.changes.append(job.path) }
                    // What this walk tried again under its path is known anew.
                    s.unwatched = s.unwatched.filter { !Self.isAtOrUnder($0.key, job.path) }
                    s.unwatched.merge(walk.failures) { $1 }
                    // Gone (or renamed) before it was walked: whatever became of it, the whole
                    // tree. (One that is there but could not be watched is in `unwatched`.)
                    if !walk.rootWatched && walk.failures[job.path] == nil { s.wholeTreePending = true }
                }
                s.directories.merge(found.filter { !s.ignoredDuringWalk.contains($0.key) }) { $1 }
                s.ignoredDuringWalk = []
                if walk.overLimit || s.directories.count > maxWatches {
                    for wd in found.keys { s.directories[wd] = s.directories[wd] ?? [] }   // given back too
                    Self.giveUp(&s, fd: fd)
                }
                let changed = s.changes.count != named.0 || s.changesLost != named.1 || s.overLimit
                return changed ? s.changeHandler : nil
            }
            tell?()
        }
    }

    /// Whether `path` is `directory` or lies under it.
    static func isAtOrUnder(_ path: [UInt8], _ directory: [UInt8]) -> Bool {
        path.starts(with: directory) && (path.count == directory.count || path[directory.count] == UInt8(ascii: "/"))
    }

    /// Watches `path` and every directory below it with `fd`, and returns them by watch
    /// descriptor, stopping (`overLimit`) rather than watch more than `limit`. Symlinks are not followed: a link to a directory inside the root reaches one that
    /// is watched anyway, and one outside is never served. A directory is watched before it is
    /// listed, so one created in it meanwhile is reported. `failures`: the directories that
    /// could not be watched or listed, with `errno` (`inotify_add_watch` or `opendir`), for
    /// any reason but having gone (or become something else) meanwhile, which is itself an
    /// event, or a path too long to be requested; `rootWatched`, whether `path` itself is now
    /// watched.
    static func watchTree(_ path: [UInt8], fd: Int32, limit: Int)
        -> (directories: [Int32: [UInt8]], failures: [[UInt8]: Int32], rootWatched: Bool, overLimit: Bool) {
        var directories: [Int32: [UInt8]] = [:]
        var pending = [path]
        var failures: [[UInt8]: Int32] = [:]
        var rootWatched = false
        while let directory = pending.popLast() {
            if directories.count >= limit { return (directories, failures, rootWatched, true) }
            let cPath = directory + [0]
            let wd = cPath.withUnsafeBufferPointer { p in
                clinux_inotify_watch_directory(fd, UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self))
            }
            if wd < 0 {
                if errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG { failures[directory] = errno }
                continue
            }
            directories[wd] = directory
            if directory == path { rootWatched = true }
            let listing = cPath.withUnsafeBufferPointer { p in
                opendir(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self))
            }
            guard let listing else {
                if errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG { failures[directory] = errno }
                continue
            }
            while let entry = readdir(listing) {
                let name = Library.direntName(entry)
                if name == [0x2E] || name == [0x2E, 0x2E] { continue }
                let child = directory + [UInt8(ascii: "/")] + name
                var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
                if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                    var st = stat()
                    isDirectory = (child + [0]).withUnsafeBufferPointer { p in
                        lstat(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), &st) == 0
                    } && (st.st_mode & S_IFMT) == S_IFDIR
                }
                if isDirectory { pending.append(child) }
            }
            closedir(listing)
        }
        return (directories, failures, rootWatched, false)
    }
}
