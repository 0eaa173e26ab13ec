import CLinux
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells whether anything under the library root may have changed since a given moment, as the
/// kernel reports changes (inotify(7)). A request for a recently resolved URL then trusts what
/// it resolved after one `epoll_wait` with a zero timeout instead of a `stat` of its source: the
/// `stat` (a path walk whose last steps both event loops take on the same dentries) was 1.4 µs
/// of the 9.2 µs of CPU a memory hit cost under load (`Tests/Benchmarks`, A/B in one run).
///
/// What it sees: every change made through the library's directories — a file written,
/// truncated, touched (`utimes`, `chmod`), created, deleted or renamed over, a symlink made,
/// removed or replaced, a directory created, moved or deleted. New directories are watched as
/// they appear.
///
/// One inotify instance per server, whatever the number of event loops: each directory costs
/// one of the user's `fs.inotify.max_user_watches` (one instance per loop used to cost one per
/// loop and exhausted the limit for other programs). Each event loop asks through a watch of
/// its own (`group(root:count:maxWatches:)`): an epoll instance of its own in which the shared
/// inotify descriptor is registered, its *probe*. Asking the shared descriptor itself
/// (`ioctl(FIONREAD)`) from two loops bounced its lock and reference count between the cores
/// (405 ns a call against 148 ns, C, on the development machine); a probe's ready list belongs
/// to its loop alone, and looking at it takes no lock while nothing is queued.
///
/// Why a request sent after a change is never answered from before it (Linux 6.x,
/// `fs/notify/notification.c` and `fs/eventpoll.c`):
/// 1. The kernel queues the event inside the system call that makes the change, before it
///    returns (`fsnotify_insert_event`), and in the same call wakes the inotify descriptor's
///    wait queue, which puts the descriptor on the ready list of every probe
///    (`ep_poll_callback`) — all before the changing call returns. (An event merged into the
///    last queued one, or dropped for an overflow already queued, wakes no one, but then the
///    queue was not empty, so the descriptor was on every ready list already; see 2.)
/// 2. A probe's ready list loses the descriptor only in an `epoll_wait` on that probe, which
///    then asks inotify (`inotify_poll`, under the queue's lock) and puts it back while anything
///    is queued. Only its own watch waits on a probe, one caller at a time (`probing`), so:
///    while an event is queued, every probe reports it.
/// 3. A hit asks its probe after its request's bytes were read, so after the change. Either the
///    event is still queued (the probe says so and the events are read, moving the generation on
///    before a stamp is given), or another thread has taken it out of the queue — and that
///    thread marked the generation as being read before its `read` (which takes the queue's
///    lock after the mark; the probe's `inotify_poll` takes it after that), so the generation
///    this call loads shows the mark or the number after it, and it waits or gets a new stamp.
/// Either way the stamp differs from any given before the change, and a memoised URL checked
/// under an older one is resolved again.
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
/// there is no directory at the root's path (looked for again every 100 ms), while some
/// directory cannot be watched or listed (`unwatchedDirectories`: EACCES when the server's user
/// may not read it, ENOSPC for `fs.inotify.max_user_watches`...; each is tried again when its
/// parent reports a change of its metadata, as a `chmod` back makes, and every `retrySeconds`,
/// for what no event reports, such as watches another program gave back), and for good once the tree has more directories than `maxWatches`: then every
/// watch is given back to the kernel, for other programs, and users of the stamps resolve their
/// sources again on every request (`Statistics.overLimit`; a restart tries again).
///
/// Thread-safe: the generation is an atomic; reading events and the map of watches sit behind
/// one `Mutex` of the shared instance, taken only when events are queued or the watch is
/// blind; each watch's probe is asked under a `Mutex` of its own (`probing`), which only its
/// event loop takes on a hit.
public final class LibraryWatch: Sendable {
    /// For `/stats` (`library.watch`).
    public struct Statistics: Sendable, Equatable {
        /// Whether stamps are given now (false: sources are `stat`ed on every request).
        public var active = false
        /// Directories watched: the inotify watches held (one each, however many event loops ask).
        public var directories = 0
        /// Events read from the kernel.
        public var events = 0
        /// Walks of the whole tree after the first one.
        public var rewalks = 0
        /// The most directories watched before the watch gives up (`maxWatches`).
        public var limit = Int.max
        /// The tree had more directories than `limit`: nothing is watched, no stamps, for good.
        public var overLimit = false

        /// These values; by default those of a watch that gives no stamps, watches nothing and
        /// has no limit.
        public init(active: Bool = false, directories: Int = 0, events: Int = 0, rewalks: Int = 0,
                    limit: Int = Int.max, overLimit: Bool = false) {
            self.active = active
            self.directories = directories
            self.events = events
            self.rewalks = rewalks
            self.limit = limit
            self.overLimit = overLimit
        }
    }

    /// The shared inotify instance and what it knows of the tree (see the type's doc).
    let instance: Instance
    /// This watch's epoll instance, with `instance.fd` registered in it (level-triggered).
    private let probe: Int32
    /// Serialises `epoll_wait` on `probe`: two callers scanning one epoll instance at once could
    /// see its ready list empty while the other has it in hand. Uncontended when each event loop
    /// has its own watch.
    private let probing = Mutex<Void>(())
    /// The library root, symlinks resolved (`Library.root`).
    public var root: String { instance.root }

    /// Why no watch could be set up: the call that failed and its `errno`.
    public struct SetupError: Error, Sendable, Equatable, CustomStringConvertible {
        /// `inotify_init1` or `epoll_create1` / `epoll_ctl` (a probe).
        public var call: String
        /// Its `errno`: EMFILE (`fs.inotify.max_user_instances`, or the process's open-file
        /// limit), ENFILE (the system's), ENOMEM.
        public var error: Int32

        /// `call` failed with `error`.
        public init(call: String, error: Int32) {
            self.call = call
            self.error = error
        }

        /// `call`, what `error` means (`LibraryWatch.cause(of:)`).
        public var description: String { "\(call) failed: \(LibraryWatch.cause(of: error))" }
    }

    /// A directory of the tree that is not watched now, and why (`unwatchedDirectories`).
    public struct UnwatchedDirectory: Sendable, Equatable {
        /// Its absolute path (for messages: bytes that are not UTF-8 show as U+FFFD).
        public var path: String
        /// The `errno` of `inotify_add_watch` or `opendir`: EACCES or EPERM (the server's user
        /// may not read it), ENOSPC (`fs.inotify.max_user_watches`), ENOMEM, EMFILE...
        public var error: Int32

        /// A directory at `path` not watched for `error`.
        public init(path: String, error: Int32) {
            self.path = path
            self.error = error
        }
    }

    /// Watches every directory under `root` (an absolute path with symlinks resolved), walked
    /// now, before returning, with an inotify instance of its own. Nil when no inotify or epoll
    /// instance can be had (`fs.inotify.max_user_instances`, the open-file limit); when some
    /// directory cannot be watched the watch exists but gives no stamps (`statistics.active` is
    /// false; `unwatchedDirectories` says which and why; each is tried again every
    /// `retrySeconds`, 2 s by default, and when its metadata changes), and when the tree has
    /// more than `maxWatches` directories it watches none (`statistics.overLimit`).
    /// `maxWatches`: unlimited by default (see `userWatchLimit()`).
    public convenience init?(root: String, maxWatches: Int = Int.max, retrySeconds: Double = 2) {
        guard let instance = try? Instance(root: root, maxWatches: maxWatches, retrySeconds: retrySeconds),
              let probe = try? Self.probes(of: instance, count: 1).first else { return nil }
        self.init(instance: instance, probe: probe)
    }

    private init(instance: Instance, probe: Int32) {
        self.instance = instance
        self.probe = probe
    }

    deinit {
        _ = Glibc.close(probe)
    }

    /// `count` watches of `root` (one per event loop) sharing one inotify instance, set up with
    /// one walk of the tree: each directory is watched once, whatever `count` is. Each watch has
    /// its own probe (an epoll instance), so that loops asking share no lock on a hit. Nil when
    /// the inotify instance or a probe cannot be had. `maxWatches` and `retrySeconds` as in
    /// `init(root:maxWatches:retrySeconds:)`.
    public static func group(root: String, count: Int, maxWatches: Int = Int.max, retrySeconds: Double = 2) -> [LibraryWatch]? {
        try? makeGroup(root: root, count: count, maxWatches: maxWatches, retrySeconds: retrySeconds)
    }

    /// As `group(root:count:maxWatches:retrySeconds:)`, saying why when there is none.
    /// - Throws: `SetupError` naming the call that failed (`inotify_init1`, `epoll_create1`
    ///   or `epoll_ctl`) and its `errno`.
    public static func makeGroup(root: String, count: Int, maxWatches: Int = Int.max,
                                 retrySeconds: Double = 2) throws(SetupError) -> [LibraryWatch] {
        let instance = try Instance(root: root, maxWatches: maxWatches, retrySeconds: retrySeconds)
        return try probes(of: instance, count: count).map { LibraryWatch(instance: instance, probe: $0) }
    }

    /// `count` (at least one) epoll instances, each with `instance.fd` registered.
    /// - Throws: `SetupError` when one cannot be had (the ones made are closed).
    private static func probes(of instance: Instance, count: Int) throws(SetupError) -> [Int32] {
        var probes: [Int32] = []
        for _ in 0..<max(1, count) {
            let probe = clinux_epoll_create()
            guard probe >= 0, clinux_epoll_add(probe, instance.fd, clinux_epoll_in, 0) == 0 else {
                let failure = SetupError(call: probe < 0 ? "epoll_create1" : "epoll_ctl", error: errno)
                if probe >= 0 { _ = Glibc.close(probe) }
                for probe in probes { _ = Glibc.close(probe) }
                throw failure
            }
            probes.append(probe)
        }
        return probes
    }

    /// The directories of the tree that are not watched now, and why, in path order (empty
    /// when all are, or nothing is watched for being over the limit). Reads what is queued
    /// first, and may start a retry that is due.
    public var unwatchedDirectories: [UnwatchedDirectory] {
        _ = instance.readEvents()
        return instance.state.withLock { s in
            s.unwatched.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
                UnwatchedDirectory(path: String(decoding: $0.key, as: UTF8.self), error: $0.value)
            }
        }
    }

    /// What `errno` value `error` means for a watch, in words with its name:
    /// `"permission denied (EACCES): the server's user may not read it"`. From inotify(7),
    /// inotify_add_watch(2), inotify_init1(2) and opendir(3); others as `strerror(3)` gives them.
    public static func cause(of error: Int32) -> String {
        switch error {
        case EACCES: "permission denied (EACCES): the server's user may not read it"
        case EPERM: "operation not permitted (EPERM): the server's user may not read it"
        case ENOSPC: "the user's inotify watches are used up (ENOSPC): fs.inotify.max_user_watches, shared by all of the user's programs"
        case EMFILE: "too many open files (EMFILE): fs.inotify.max_user_instances, or this process's open-file limit"
        case ENFILE: "too many open files in the system (ENFILE)"
        case ENOMEM: "out of kernel memory (ENOMEM)"
        case ELOOP: "too many symbolic links (ELOOP)"
        case EIO: "an I/O error (EIO)"
        default: String(cString: strerror(error)) + " (errno \(error))"
        }
    }

    /// `fs.inotify.max_user_watches` (inotify(7)): the watches one user may hold, across all of
    /// their processes. Nil when `/proc/sys/fs/inotify/max_user_watches` cannot be read.
    public static func userWatchLimit() -> Int? {
        let fd = open("/proc/sys/fs/inotify/max_user_watches", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let digits = bytes[..<n].prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        let value = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return value > 0 ? value : nil
    }

    /// Whether `other` asks the same inotify instance (a watch of the same `group`).
    public func sharesInstance(with other: LibraryWatch) -> Bool { instance === other.instance }

    /// The shared inotify descriptor (for tests: `/proc/self/fdinfo` lists its watches).
    var inotifyDescriptor: Int32 { instance.fd }

    /// A number that stays the same only as long as no change under the root has been reported;
    /// nil when the watch cannot vouch for the whole tree now. Costs one `epoll_wait` on this
    /// watch's probe when nothing is queued; otherwise reads the events first (and starts walks
    /// of new directories). Why an unchanged stamp can be trusted: see the type's doc.
    public func stamp() -> UInt64? {
        let ready = probing.withLock { _ in clinux_epoll_ready(probe) }
        let g = instance.generation.load(ordering: .sequentiallyConsistent)
        if ready == 0 && g & Instance.flags == 0 { return g }
        if ready < 0 || g & Instance.abandoned != 0 { return nil }
        return instance.readEvents()
    }

    /// Reads what is queued, so the figures are current, and reports them (for the shared
    /// instance: every watch of a group reports the same).
    public var statistics: Statistics {
        _ = instance.readEvents()
        let g = instance.generation.load(ordering: .sequentiallyConsistent)
        return instance.state.withLock { s in
            Statistics(active: g & Instance.blind == 0, directories: s.directories.count, events: s.events,
                       rewalks: s.rewalks, limit: instance.maxWatches, overLimit: s.overLimit)
        }
    }
}

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
