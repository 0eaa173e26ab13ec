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
