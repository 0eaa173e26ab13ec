import CVideoShim
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Decodes videos' poster frames in helper processes that it starts and keeps (README
/// "Videos"): at most `decoders` at once, one request at a time each. A helper that dies during
/// a decode (a codec crash) costs that one render, `.unsupportedSource`; one that gives no
/// answer within the deadline (`Configuration.timeoutMilliseconds`) is killed then,
/// `.decodeTimeout`, and its slot goes to the next video; either way the next decode starts a
/// fresh helper. Thread-safe: idle helpers and counters sit behind one `Mutex`; a semaphore
/// bounds the decodes under way.
public final class VideoPosters: Sendable {
    /// How helpers are run and how long a decode may take.
    public struct Configuration: Sendable {
        /// The binary run as the helper: `/proc/self/exe` (thumbd itself) by default; tests,
        /// whose process is the test runner, give the built `thumbd`.
        public var executable: String
        /// The helper's one argument: `VideoHelper.argument` by default.
        public var argument: String
        /// Helper processes, and so decodes at once, at most: `2` by default. A 4K HEVC poster
        /// takes about 0.5 s and 400 MB in its helper.
        public var decoders: Int
        /// One decode's deadline, ms, at least 1: `5_000` by default (`video_decode_timeout_seconds`).
        /// Inside the helper libav's interrupt callback ends a read that passes it; the parent
        /// waits exactly as long for the answer, then kills the helper (a decoder stuck in a loop
        /// never consults the callback), so a hung decode holds its slot no longer than this.
        public var timeoutMilliseconds: Int

        /// A configuration; each parameter is the field of the same name.
        public init(executable: String = "/proc/self/exe", argument: String = VideoHelper.argument,
                    decoders: Int = 2, timeoutMilliseconds: Int = 5_000) {
            self.executable = executable
            self.argument = argument
            self.decoders = max(1, decoders)
            self.timeoutMilliseconds = max(1, timeoutMilliseconds)
        }
    }

    /// What the helpers did since start (`/stats` `video`).
    public struct Statistics: Sendable, Equatable {
        /// Poster frames decoded; decodes that failed (any reason, crashes and hangs included).
        public var decoded = 0, failed = 0
        /// Helpers that died during a decode; helpers killed for giving no answer in time.
        public var crashes = 0, hangs = 0
        /// Helpers killed with SIGKILL or SIGTERM from outside during a decode (the out-of-memory
        /// killer, a memory limit, an operator): 503, not held against the file.
        public var killed = 0
        /// Helper processes started (the first ones included).
        public var helpersStarted = 0
        /// Decodes under way now.
        public var inFlight = 0

        /// All counts 0: a pool before its first decode.
        public init() {}
    }

    private struct Helper {
        let pid: pid_t
        let socket: Int32
    }

    private struct State {
        var idle: [Helper] = []
        var busy: [pid_t] = []
        var statistics = Statistics()
    }

    /// How its helpers run (given at init).
    public let configuration: Configuration
    private let state = Mutex(State())
    private let slots: DispatchSemaphore

    /// A pool that starts no helper until the first decode.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        slots = DispatchSemaphore(value: configuration.decoders)
    }

    deinit {
        for helper in state.withLock({ $0.idle }) { Self.stop(helper) }
    }

    /// Counters since start.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Process ids of the helpers decoding now (for the test that kills one mid-decode).
    public var busyHelpers: [pid_t] { state.withLock { $0.busy } }

    /// Process ids of the helpers waiting for work.
    public var idleHelpers: [pid_t] { state.withLock { $0.idle.map(\.pid) } }

    /// Decodes the poster frame of the video open on `descriptor` (the frame rule: README
    /// "Videos"), refusing a stream header over `maxPixels` px (`0`: no limit) before a decoder
    /// opens. Blocks while `decoders` decodes are under way.
    /// - Throws: `.unsupportedSource` (not a video read here, no frame decodes, the helper
    ///   crashed), `.sourceTooLarge`, `.decodeTimeout`, `.internalFailure` (no helper could start).
    func poster(descriptor: Int32, maxPixels: Int) throws(RenderError) -> PosterFrame {
        slots.wait()
        defer { slots.signal() }
        let helper = try takeHelper()
        var limits = cvideo_limits(max_pixels: Int64(maxPixels), timeout_ms: Int32(clamping: configuration.timeoutMilliseconds))
        var frame = cvideo_frame()
        var failure = cvideo_failure()
        let result = cvideo_helper_request(helper.socket, descriptor, &limits,
                                           Int32(clamping: configuration.timeoutMilliseconds), &frame, &failure)
        let lost = result == -2
        // A helper that went away during the decode: how it ended tells a crash (a signal the
        // decoder raised, SIGSEGV, SIGABRT...: the file's doing) from SIGKILL or SIGTERM from
        // outside (the out-of-memory killer, a cgroup's MemoryMax, an operator), which is not
        // held against the file.
        let ending = lost ? Self.stop(helper, reapingFirst: failure.status == CVIDEO_HELPER_LOST) : nil
        let killedFromOutside = ending == SIGKILL || ending == SIGTERM
        state.withLock { s in
            s.busy.removeAll { $0 == helper.pid }
            s.statistics.inFlight -= 1
            if !lost { s.idle.append(helper) }
            if result == 0 { s.statistics.decoded += 1 } else { s.statistics.failed += 1 }
            if failure.status == CVIDEO_HELPER_LOST { if killedFromOutside { s.statistics.killed += 1 } else { s.statistics.crashes += 1 } }
            if failure.status == CVIDEO_HELPER_HUNG { s.statistics.hangs += 1 }
        }
        if killedFromOutside {
            throw RenderError(kind: .decodeTimeout, message: "the video helper was killed (SIGKILL or SIGTERM: the out-of-memory "
                + "killer, a memory limit or an operator) during the decode; not held against the file, try again")
        }
        guard result == 0 else { throw RenderError(failure) }
        return PosterFrame(frame: frame)
    }

    /// An idle helper that is still alive, or a new one; marked busy. A helper that died while
    /// idle (the OOM killer, an operator) is reaped and replaced here, so its death is not
    /// blamed on the next file.
    private func takeHelper() throws(RenderError) -> Helper {
        while let helper = state.withLock({ s -> Helper? in
            guard let helper = s.idle.popLast() else { return nil }
            s.busy.append(helper.pid)
            s.statistics.inFlight += 1
            return helper
        }) {
            var status: Int32 = 0
            if waitpid(helper.pid, &status, WNOHANG) == 0 { return helper }
            close(helper.socket)
            state.withLock { s in
                s.busy.removeAll { $0 == helper.pid }
                s.statistics.inFlight -= 1
            }
        }
        var pid: pid_t = 0
        var failure = cvideo_failure()
        let socket = cvideo_helper_spawn(configuration.executable, configuration.argument, &pid, &failure)
        guard socket >= 0 else { throw RenderError(failure) }
        let helper = Helper(pid: pid, socket: socket)
        state.withLock { s in
            s.busy.append(pid)
            s.statistics.inFlight += 1
            s.statistics.helpersStarted += 1
        }
        return helper
    }

    /// Kills `helper` (whatever state it is in), reaps it and closes its socket. `reapingFirst`
    /// (its socket closed during a decode): first waits up to 1 s for it to end by itself, and
    /// then returns the signal that ended it (nil when it exited, or was killed here).
    @discardableResult
    private static func stop(_ helper: Helper, reapingFirst: Bool = false) -> Int32? {
        defer { close(helper.socket) }
        var status: Int32 = 0
        if reapingFirst {
            for _ in 0..<200 {
                let reaped = waitpid(helper.pid, &status, WNOHANG)
                if reaped == helper.pid {
                    let signal = status & 0x7f   // WTERMSIG, when WIFSIGNALED (not exited, not stopped)
                    return signal != 0 && signal != 0x7f ? signal : nil
                }
                if reaped < 0 && errno != EINTR { return nil }
                usleep(5_000)
            }
        }
        kill(helper.pid, SIGKILL)
        while waitpid(helper.pid, &status, 0) < 0 && errno == EINTR {}
        return nil
    }
}
