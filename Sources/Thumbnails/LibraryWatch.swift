import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells whether anything under the library root may have changed since a given moment, as the
/// kernel reports changes (inotify(7)). A request for a recently resolved URL then trusts what
/// it resolved after one `ioctl(FIONREAD)` instead of a `stat` of its source: the `stat` (a
/// path walk whose last steps both event loops take on the same dentries) was 1.4 µs of the
/// 9.2 µs of CPU a memory hit cost under load (`Tests/Benchmarks`, A/B in one run).
///
/// What it sees: every change made through the library's directories — a file written,
/// truncated, touched (`utimes`, `chmod`), created, deleted or renamed over, a symlink made,
/// removed or replaced, a directory created, moved or deleted. New directories are watched as
/// they appear. The kernel queues the event inside the system call that makes the change,
/// before it returns, so a client that replaces a file and then asks for its thumbnail is never
/// answered from before the change.
///
/// What it cannot see (inotify(7), "Limitations and caveats"): writes through a shared `mmap`,
/// native AIO writes (`io_submit`) until the writer closes the file, writes through a hard
/// link that lives outside the library, changes made by another host on a
/// network filesystem, a filesystem mounted or unmounted inside the library after the walk,
/// and a directory above the root renamed with a new tree put in its place. Users of the stamps
/// still look at each source when their entry expires (`ResolvedKeyCache`: every 2 s);
/// `library_watch = false` in config turns the watch off, and then every request `stat`s its
/// source.
///
/// A stamp (`stamp()`) stays the same only while no change has been reported. There is none
/// (nil) while the watch cannot vouch for the whole tree: while new directories are walked, off
/// the request path (a directory created, which `cp -r` may already have filled; a tree moved
/// in, out or within), while the whole tree is walked again (after the kernel's event queue
/// overflowed, `fs.inotify.max_queued_events`, or the root itself was moved or deleted), while
/// there is no directory at the root's path (looked for again every 100 ms), and while some
/// directory cannot be watched (`fs.inotify.max_user_watches`; until a later walk of the whole
/// tree manages).
///
/// Thread-safe: the generation is an atomic; reading events and the map of watches sit behind
/// one `Mutex`, taken only when events are queued or the watch is blind.
public final class LibraryWatch: Sendable {
    /// For `/stats` (`library.watch`).
    public struct Statistics: Sendable, Equatable {
        /// Whether stamps are given now (false: sources are `stat`ed on every request).
        public var active = false
        /// Directories watched.
        public var directories = 0
        /// Events read from the kernel.
        public var events = 0
        /// Walks of the whole tree after the first one.
        public var rewalks = 0

        public init(active: Bool = false, directories: Int = 0, events: Int = 0, rewalks: Int = 0) {
            self.active = active
            self.directories = directories
            self.events = events
            self.rewalks = rewalks
        }
    }

    private struct State {
        /// Watch descriptor → the directory's path (bytes, as on disk: a name need not be
        /// UTF-8), for the paths of new subdirectories.
        var directories: [Int32: [UInt8]] = [:]
        var events = 0
        var rewalks = 0
        /// A directory could not be watched (`fs.inotify.max_user_watches`, say): no stamps
        /// until a walk of the whole tree watches everything.
        var failed = false
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

        /// Whether the watch can vouch for the whole tree: every directory watched and no walk
        /// under way or to come.
        var sighted: Bool {
            !failed && !walking && !wholeTreePending && subtreesPending.isEmpty && !rootMissing
        }
    }

    /// Counts in steps of 4. Bit 0: events are being read; bit 1: the tree is not all watched.
    private let generation = Atomic<UInt64>(0)
    private static let reading: UInt64 = 1
    private static let blind: UInt64 = 2
    private let fd: Int32
    /// The library root, symlinks resolved (`Library.root`).
    public let root: String
    private let rootBytes: [UInt8]
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "thumbd.library-watch", qos: .utility)

    /// Watches every directory under `root` (an absolute path with symlinks resolved), walked
    /// now, before returning. Nil when no inotify instance can be had
    /// (`fs.inotify.max_user_instances`); when some directory cannot be watched the watch
    /// exists but gives no stamps (`statistics.active` is false).
    public convenience init?(root: String) {
        guard let only = Self.watches(root: root, count: 1)?.first else { return nil }
        self.init(root: root, fd: only.fd, directories: only.directories, walk: only.walk)
    }

    /// `count` watches of `root`, each with its own inotify instance (one per event loop, so
    /// that the loops share no kernel lock), set up with one walk of the tree that adds every
    /// directory to all of them. Nil when that many instances cannot be had.
    public static func group(root: String, count: Int) -> [LibraryWatch]? {
        guard let made = watches(root: root, count: count) else { return nil }
        return made.map { LibraryWatch(root: root, fd: $0.fd, directories: $0.directories, walk: $0.walk) }
    }

    private static func watches(root: String, count: Int)
        -> [(fd: Int32, directories: [Int32: [UInt8]], walk: (complete: Bool, rootWatched: Bool))]? {
        var fds: [Int32] = []
        for _ in 0..<max(1, count) {
            let fd = clinux_inotify()
            guard fd >= 0 else {
                for fd in fds { _ = Glibc.close(fd) }
                return nil
            }
            fds.append(fd)
        }
        var maps = [[Int32: [UInt8]]](repeating: [:], count: fds.count)
        let walk = watchTree(Array(root.utf8), fds: fds, into: &maps)
        return fds.indices.map { (fds[$0], maps[$0], walk) }
    }

    private init(root: String, fd: Int32, directories: [Int32: [UInt8]], walk: (complete: Bool, rootWatched: Bool)) {
        self.fd = fd
        self.root = root
        rootBytes = Array(root.utf8)
        var initial = State()
        initial.directories = directories
        initial.failed = !walk.complete
        initial.rootMissing = !walk.rootWatched
        initial.lastWalkEnded = DispatchTime.now().uptimeNanoseconds
        state = Mutex(initial)
        if !initial.sighted { generation.store(Self.blind, ordering: .sequentiallyConsistent) }
    }

    deinit {
        _ = Glibc.close(fd)
    }

    /// A number that stays the same only as long as no change under the root has been reported;
    /// nil when the watch cannot vouch for the whole tree now. Costs one `ioctl` when nothing
    /// is queued; otherwise reads the events first (and starts walks of new directories).
    ///
    /// Why it is safe to trust an unchanged stamp: the kernel queues an event before the
    /// changing call returns. Either it is still queued when we ask (then it is read and the
    /// generation moves on before a stamp is given), or another thread has taken it out of the
    /// queue, and that thread marked the generation as being read before it did (then this
    /// call waits for it to finish).
    public func stamp() -> UInt64? {
        let pending = clinux_unread_bytes(fd)
        let g = generation.load(ordering: .sequentiallyConsistent)
        if pending == 0 && g & (Self.reading | Self.blind) == 0 { return g }
        if pending < 0 { return nil }
        return readEvents()
    }

    /// Reads what is queued, so the figures are current, and reports them.
    public var statistics: Statistics {
        _ = stamp()
        let g = generation.load(ordering: .sequentiallyConsistent)
        return state.withLock { s in
            Statistics(active: g & Self.blind == 0, directories: s.directories.count, events: s.events,
                       rewalks: s.rewalks)
        }
    }

    /// Reads what is queued, under the lock, and moves the generation on. While there is no
    /// root, also looks for one again (at most every 100 ms).
    private func readEvents() -> UInt64? {
        state.withLock { s in
            if clinux_unread_bytes(fd) > 0 {
                let before = generation.load(ordering: .sequentiallyConsistent)
                generation.store(before | Self.reading, ordering: .sequentiallyConsistent)
                handle(&s)
                let blind = s.sighted ? 0 : Self.blind
                generation.store(((before & ~(Self.reading | Self.blind)) + 4) | blind, ordering: .sequentiallyConsistent)
            } else if s.rootMissing && !s.walking
                        && DispatchTime.now().uptimeNanoseconds &- s.lastWalkEnded > 100_000_000 {
                s.wholeTreePending = true
            }
            startWalks(&s)
            let g = generation.load(ordering: .sequentiallyConsistent)
            return g & (Self.reading | Self.blind) == 0 ? g : nil
        }
    }

    /// Reads the queued events (up to 64 buffers' worth; any left are read by the next
    /// `stamp`) and decides what must be walked, off the request path:
    /// - a directory created: its subtree (`cp -r` or `tar x` may have filled it already);
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
                    if mask & clinux_inotify_overflow != 0 { s.wholeTreePending = true }
                    if mask & (clinux_inotify_move_self | clinux_inotify_delete_self | clinux_inotify_ignored) != 0,
                       s.directories[wd] == rootBytes {
                        s.wholeTreePending = true
                    }
                    if mask & clinux_inotify_ignored != 0 {
                        s.directories[wd] = nil
                        if s.walking { s.ignoredDuringWalk.insert(wd) }
                    }
                    if mask & clinux_inotify_isdir != 0 {
                        if mask & (clinux_inotify_moved_from | clinux_inotify_moved_to) != 0 {
                            s.wholeTreePending = true
                        } else if mask & clinux_inotify_create != 0 {
                            // After a failure, only a walk of the whole tree can make it whole.
                            if let parent = s.directories[wd], length > 0, !s.walking, !s.failed {
                                let name = UnsafeRawBufferPointer(rebasing: raw[(offset + 16)..<(offset + 16 + length)])
                                s.subtreesPending.append(parent + [UInt8(ascii: "/")] + name.prefix { $0 != 0 })
                            } else {
                                s.wholeTreePending = true
                            }
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
        guard !s.walking, s.wholeTreePending || !s.subtreesPending.isEmpty else { return }
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
                generation.store(((g & ~Self.blind) + 4) | (s.sighted ? 0 : Self.blind), ordering: .sequentiallyConsistent)
                return nil
            }
            guard let job else { return }
            var maps: [[Int32: [UInt8]]] = [[:]]
            let walk = Self.watchTree(job.path, fds: [fd], into: &maps)
            let found = maps[0]
            state.withLock { s in
                if job.wholeTree {
                    // Watches from before the walk that it did not find again are of
                    // directories that left the tree (an old root, a tree moved out): dropped.
                    for (wd, _) in s.directories where job.before.contains(wd) && found[wd] == nil {
                        _ = clinux_inotify_unwatch(fd, wd)
                        s.directories[wd] = nil
                    }
                    s.rewalks += 1
                    s.rootMissing = !walk.rootWatched
                    s.failed = !walk.complete
                    s.lastWalkEnded = DispatchTime.now().uptimeNanoseconds
                } else {
                    if !walk.complete { s.failed = true }
                    // Gone (or renamed) before it was walked: whatever became of it, the whole tree.
                    if !walk.rootWatched { s.wholeTreePending = true }
                }
                s.directories.merge(found.filter { !s.ignoredDuringWalk.contains($0.key) }) { $1 }
                s.ignoredDuringWalk = []
            }
        }
    }

    /// Watches `path` and every directory below it with each of `fds` (into the map of the same
    /// index). Symlinks are not followed: a link to a directory inside the root reaches one that
    /// is watched anyway, and one outside is never served. A directory is watched before it is
    /// listed, so one created in it meanwhile is reported. `complete` is false when a directory
    /// could not be watched for a reason other than having gone (or become something else)
    /// meanwhile, which is itself an event, or a path too long to be requested;
    /// `rootWatched`, whether `path` itself is now watched.
    static func watchTree(_ path: [UInt8], fds: [Int32], into maps: inout [[Int32: [UInt8]]])
        -> (complete: Bool, rootWatched: Bool) {
        var pending = [path]
        var complete = true
        var rootWatched = false
        while let directory = pending.popLast() {
            let cPath = directory + [0]
            var watched = false
            for (k, fd) in fds.enumerated() {
                let wd = cPath.withUnsafeBufferPointer { p in
                    clinux_inotify_watch_directory(fd, UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self))
                }
                if wd < 0 {
                    if errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG { complete = false }
                    continue
                }
                maps[k][wd] = directory
                watched = true
            }
            guard watched else { continue }
            if directory == path { rootWatched = true }
            let listing = cPath.withUnsafeBufferPointer { p in
                opendir(UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self))
            }
            guard let listing else {
                if errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG { complete = false }
                continue
            }
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
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
        return (complete, rootWatched)
    }
}
