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
/// writes through a hard link that lives outside the library, changes made by another host on a
/// network filesystem, and a directory above the root renamed with a new tree put in its
/// place (the root itself moved or deleted is seen, and its path walked again). Users of the stamps still `stat` each source when their entry
/// expires (`ResolvedKeyCache`: every 2 s); `library_watch = false` in config turns the watch
/// off, and then every request `stat`s its source.
///
/// A stamp (`stamp()`) stays the same only while no change has been reported. There is none
/// (nil) while the watch cannot vouch for the whole tree: while the tree is walked again after
/// the kernel's event queue overflowed (`fs.inotify.max_queued_events`), and for good when a
/// directory could not be watched (`fs.inotify.max_user_watches`).
///
/// Thread-safe: the generation is an atomic; reading events and the map of watches sit behind
/// one `Mutex`, taken only when events are queued.
public final class LibraryWatch: Sendable {
    /// For `/stats` (`library_watch`).
    public struct Statistics: Sendable, Equatable {
        /// Whether stamps are given now (false: sources are `stat`ed on every request).
        public var active = false
        /// Directories watched.
        public var directories = 0
        /// Events read from the kernel.
        public var events = 0
        /// Walks of the whole tree after the first one (after the event queue overflowed).
        public var rewalks = 0

        public init(active: Bool = false, directories: Int = 0, events: Int = 0, rewalks: Int = 0) {
            self.active = active
            self.directories = directories
            self.events = events
            self.rewalks = rewalks
        }
    }

    private struct State {
        /// Watch descriptor → the directory's path, for the paths of new subdirectories.
        var directories: [Int32: String] = [:]
        var events = 0
        var rewalks = 0
        /// A directory could not be watched: no stamp is given again.
        var failed = false
        /// A walk of the whole tree is under way (no stamp until it ends).
        var rewalking = false
        /// Scratch space events are read into (64 KiB).
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    }

    /// Counts in steps of 4. Bit 0: events are being read; bit 1: the tree is not all watched.
    private let generation = Atomic<UInt64>(0)
    private static let reading: UInt64 = 1
    private static let blind: UInt64 = 2
    private let fd: Int32
    /// The library root, symlinks resolved (`Library.root`).
    public let root: String
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "thumbd.library-watch", qos: .utility)

    /// Watches every directory under `root` (an absolute path with symlinks resolved), walked
    /// now, before returning. Nil when no inotify instance can be had
    /// (`fs.inotify.max_user_instances`); when some directory cannot be watched the watch
    /// exists but gives no stamps (`statistics.active` is false).
    public init?(root: String) {
        let fd = clinux_inotify()
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.root = root
        var initial = State()
        initial.failed = !Self.watchTree(root, fd: fd, into: &initial.directories)
        state = Mutex(initial)
        if initial.failed { generation.store(Self.blind, ordering: .sequentiallyConsistent) }
    }

    deinit {
        _ = Glibc.close(fd)
    }

    /// A number that stays the same only as long as no change under the root has been reported;
    /// nil when the watch cannot vouch for the whole tree now. Costs one `ioctl` when nothing
    /// is queued; otherwise reads the events first (watching new directories).
    ///
    /// Why it is safe to trust an unchanged stamp: the kernel queues an event before the
    /// changing call returns. Either it is still queued when we ask (then it is read and the
    /// generation moves on before a stamp is given), or another thread has taken it out of the
    /// queue, and that thread marked the generation as being read before it did (then this
    /// call waits for it to finish).
    public func stamp() -> UInt64? {
        let pending = clinux_inotify_pending(fd)
        let g = generation.load(ordering: .sequentiallyConsistent)
        if pending == 0 && g & (Self.reading | Self.blind) == 0 { return g }
        if pending < 0 { return nil }
        return readEvents()
    }

    public var statistics: Statistics {
        let g = generation.load(ordering: .sequentiallyConsistent)
        return state.withLock { s in
            Statistics(active: g & Self.blind == 0, directories: s.directories.count, events: s.events,
                       rewalks: s.rewalks)
        }
    }

    /// Reads what is queued, under the lock, and moves the generation on.
    private func readEvents() -> UInt64? {
        state.withLock { s in
            if clinux_inotify_pending(fd) > 0 {
                let before = generation.load(ordering: .sequentiallyConsistent)
                generation.store(before | Self.reading, ordering: .sequentiallyConsistent)
                let overflowed = handle(&s)
                if overflowed && !s.rewalking {
                    s.rewalking = true
                    rewalk()
                }
                let blind = s.failed || s.rewalking ? Self.blind : 0
                generation.store(((before & ~(Self.reading | Self.blind)) + 4) | blind, ordering: .sequentiallyConsistent)
            }
            let g = generation.load(ordering: .sequentiallyConsistent)
            return g & (Self.reading | Self.blind) == 0 ? g : nil
        }
    }

    /// Reads the queued events (up to 64 buffers' worth; any left are read by the next
    /// `stamp`), watching directories that were created or moved in. True when the whole tree
    /// must be walked again: the kernel's queue overflowed, or the root itself was moved or
    /// deleted.
    private func handle(_ s: inout State) -> Bool {
        var overflowed = false
        var created: [String] = []
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
                    if mask & clinux_inotify_overflow != 0 { overflowed = true }
                    // The root itself moved or deleted (a new tree put in its place, say):
                    // what is at its path now is watched by walking it again.
                    if s.directories[wd] == root, mask & (clinux_inotify_move_self | clinux_inotify_delete_self) != 0 {
                        overflowed = true
                    }
                    if mask & clinux_inotify_ignored != 0 { s.directories[wd] = nil }
                    if mask & clinux_inotify_isdir != 0, mask & (clinux_inotify_create | clinux_inotify_moved_to) != 0,
                       length > 0, let parent = s.directories[wd] {
                        let name = raw.baseAddress!.advanced(by: offset + 16).assumingMemoryBound(to: CChar.self)
                        created.append(parent + "/" + String(cString: name))
                    }
                    offset += 16 + length
                }
                return n
            }
            if n <= 0 { break }
        }
        // A directory moved within the tree keeps its watches; watching it again under its new
        // path gives the same descriptors, so their paths are mended too.
        for path in created where !Self.watchTree(path, fd: fd, into: &s.directories) { s.failed = true }
        return overflowed
    }

    /// After an overflow (events were lost, among them perhaps new directories) or with a new
    /// directory at the root's path: walks the whole tree again off the request path; stamps
    /// come back when it is done.
    private func rewalk() {
        queue.async { [self] in
            var found: [Int32: String] = [:]
            let ok = Self.watchTree(root, fd: fd, into: &found)
            state.withLock { s in
                s.directories.merge(found) { $1 }
                s.rewalks += 1
                s.rewalking = false
                if !ok { s.failed = true }
                let g = generation.load(ordering: .sequentiallyConsistent)
                generation.store(((g & ~Self.blind) + 4) | (s.failed ? Self.blind : 0), ordering: .sequentiallyConsistent)
            }
        }
    }

    /// Watches `path` and every directory below it (symlinks are not followed: a link to a
    /// directory inside the root reaches one that is watched anyway, and one outside is never
    /// served). A directory is watched before it is listed, so one created in it meanwhile is
    /// reported. False when a directory could not be watched for a reason other than having
    /// gone (or become something else) meanwhile, which is itself an event.
    static func watchTree(_ path: String, fd: Int32, into directories: inout [Int32: String]) -> Bool {
        var pending = [path]
        var complete = true
        while let directory = pending.popLast() {
            let wd = clinux_inotify_watch_directory(fd, directory)
            if wd < 0 {
                if errno != ENOENT && errno != ENOTDIR { complete = false }
                continue
            }
            directories[wd] = directory
            guard let listing = opendir(directory) else {
                if errno != ENOENT && errno != ENOTDIR { complete = false }
                continue
            }
            while let entry = readdir(listing) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name == "." || name == ".." { continue }
                let child = directory + "/" + name
                var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
                if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                    var st = stat()
                    isDirectory = lstat(child, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
                }
                if isDirectory { pending.append(child) }
            }
            closedir(listing)
        }
        return complete
    }
}
