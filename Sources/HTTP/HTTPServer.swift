#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// An HTTP/1.1 server on non-blocking sockets: one listening socket with a Dispatch read source
/// on its own queue, which hands each accepted connection, round robin, to one of
/// `eventLoopCount` workers; each worker is one thread running an epoll event loop
/// (`HTTPEventLoop`) for its connections. No thread per connection; no worker ever blocks on a
/// socket. The responder runs on the worker and must hand slow work elsewhere (thumbd reads
/// disk-cache entries there only when they are in the page cache; renders and cold reads go to
/// other threads).
///
/// The server and its workers reference each other until `shutdown` completes: keep the server
/// for the life of the process, or shut it down to release it (the workers' threads end).
public final class HTTPServer: Sendable {
    /// The settings given at init.
    public let configuration: HTTPServerConfiguration
    /// Answers every parsed request.
    public let responder: any HTTPResponder

    let acceptQueue = DispatchQueue(label: "thumbd.http.accept")
    /// Locking: guarded by this `Mutex` — the workers, the accept source and whether
    /// it is suspended, connection counts and shutdown state. Taken once per accepted and per
    /// closed connection, never per request.
    let state = Mutex(State())

    struct State {
        var workers: [HTTPWorker] = []
        var acceptSource: DispatchSourceRead?
        var acceptSuspended = true
        var started = false
        var stopped = false
        /// Accepting paused after EMFILE/ENFILE; cleared after 100 ms or when a connection closes.
        var backingOff = false
        var nextWorker = 0
        var shutdownCompletions: [@Sendable () -> Void] = []
    }

    /// The socket bound before the server was built, if one was given; else `start()` binds.
    let boundListener: HTTPListener?

    /// Connections open now and accepted since start (changed with `state`'s lock held), and
    /// the event loops' failed waits; read by anyone.
    public let counts: HTTPServerCounts

    /// Creates a server; nothing is bound until `start()`, unless `listener` is given: a socket
    /// bound already (`HTTPListener`), which `start()` accepts on (`configuration`'s host, port
    /// and backlog are then not used to bind). `counts`: where it counts its connections and
    /// failed waits (given, so that what reports them need not hold the server).
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder,
                counts: HTTPServerCounts = HTTPServerCounts(), listener: HTTPListener? = nil) {
        self.configuration = configuration
        self.responder = responder
        self.counts = counts
        boundListener = listener
    }

    /// Open connections now, and connections accepted since start.
    public var connectionCounts: (open: Int, total: Int) { counts.now }

    /// Binds and listens (unless given a bound `HTTPListener`), and starts accepting. The process must ignore SIGPIPE first
    /// (`HTTPProcess.ignoreBrokenPipes`; thumbd's `ProcessSetup`): asserted in debug builds.
    /// - Returns: the bound port (the ephemeral one when `configuration.port` is 0).
    /// - Throws: `HTTPServerError` when the host is not an IP literal, the port is in use, an
    ///   event loop cannot be created, or the server was started before.
    public func start() throws -> UInt16 {
        try state.withLock { (s) throws(HTTPServerError) in
            guard !s.started && !s.stopped else { throw .alreadyStarted }
            s.started = true
        }
        assert(HTTPSocket.brokenPipesIgnored, "SIGPIPE must be ignored before a server starts (HTTPProcess.ignoreBrokenPipes)")
        let listener: Int32, port: UInt16
        let workers: [HTTPWorker]
        do {
            if let bound = boundListener, let fd = bound.take() {
                (listener, port) = (fd, bound.port)
            } else {
                (listener, port) = try HTTPSocket.listen(host: configuration.host, port: configuration.port,
                                                         backlog: configuration.backlog)
            }
            do {
                workers = try (0..<max(1, configuration.eventLoopCount)).map { (index) throws(HTTPServerError) in
                    try HTTPWorker(index: index, server: self, configuration: configuration)
                }
            } catch {
                _ = Glibc.close(listener)
                throw error
            }
        } catch {
            state.withLock { $0.started = false }
            throw error
        }
        for w in workers { w.start() }
        state.withLock { s in
            let source = DispatchSource.makeReadSource(fileDescriptor: listener, queue: acceptQueue)
            source.setEventHandler { [self] in acceptConnections(listener) }
            source.setCancelHandler { _ = Glibc.close(listener) }
            s.workers = workers
            s.acceptSource = source
            updateAccepting(&s)
        }
        return port
    }

    /// Stops accepting at once (the listening socket is closed), closes idle connections, lets
    /// requests in flight finish their response (then closes them) for up to `gracePeriod`
    /// seconds, then closes everything. `completion` runs, on any thread, once every
    /// connection is closed.
    public func shutdown(gracePeriod: Double, completion: @escaping @Sendable () -> Void) {
        let (source, wasSuspended, workers, done) = state.withLock { s in
            s.stopped = true
            s.shutdownCompletions.append(completion)
            let source = s.acceptSource
            s.acceptSource = nil
            return (source, s.acceptSuspended, s.workers, takeCompletionsIfDone(&s))
        }
        if let source {
            source.cancel()
            if wasSuspended { source.resume() }
        }
        let grace = DispatchTime.now() + max(0, gracePeriod)
        for w in workers {
            w.execute { w.drain() }
            DispatchQueue.global().asyncAfter(deadline: grace) { w.execute { w.closeAll() } }
        }
        finish(done)
    }

    /// Whether the server accepts connections now: started, and not shut down.
    public var isAccepting: Bool { state.withLock { $0.acceptSource != nil } }

    /// Runs `completion` once every event loop has run a block queued now, so each has turned
    /// since the call (at once before `start()` and after shutdown): a liveness check, for
    /// thumbd's systemd watchdog. Never called back while a loop is stuck.
    public func whenEventLoopsTurn(_ completion: @escaping @Sendable () -> Void) {
        let workers = state.withLock { $0.workers }
        guard !workers.isEmpty else { return completion() }
        let remaining = Countdown(workers.count)
        for w in workers {
            w.execute { if remaining.finish() { completion() } }
        }
    }

    /// With the lock held: the pending shutdown completions if the server is stopped and no
    /// connection is open (they are then removed, so each runs once).
    func takeCompletionsIfDone(_ s: inout State) -> [@Sendable () -> Void] {
        guard s.stopped && counts.open == 0 && !s.shutdownCompletions.isEmpty else { return [] }
        defer { s.shutdownCompletions = [] }
        // Break the server ⇄ worker cycle: each worker goes once its loop has ended.
        for w in s.workers { w.stop() }
        s.workers = []
        return s.shutdownCompletions
    }

    func finish(_ completions: [@Sendable () -> Void]) {
        for c in completions { c() }
    }
}

/// A count of outstanding parts, shared by their completions: `finish()` is true for the last.
private final class Countdown: Sendable {
    private let left: Atomic<Int>
    init(_ count: Int) { left = Atomic(count) }
    func finish() -> Bool { left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}

/// The process-wide state an HTTP server needs, for the launcher to set (thumbd's `ProcessSetup`)
/// and for tests that run a server.
public enum HTTPProcess {
    /// Ignores SIGPIPE, so that writing to a socket whose peer closed fails with `EPIPE` instead of
    /// killing the process. Idempotent.
    public static func ignoreBrokenPipes() {
        _ = signal(SIGPIPE, SIG_IGN)
    }
}

/// A server's counters: made before the server, which counts into it, so that whoever reports
/// them (thumbd's `/stats`) is built without the server. Connections are counted by the server
/// with its lock held, failed waits by its event loops; read from any thread.
public final class HTTPServerCounts: Sendable {
    private let openCount = Atomic<Int>(0)
    private let acceptedCount = Atomic<Int>(0)
    private let waitFailures = Atomic<Int>(0)

    public init() {}

    /// Connections open now.
    public var open: Int { openCount.load(ordering: .relaxed) }

    /// Open connections now, and connections accepted since start.
    public var now: (open: Int, total: Int) {
        (openCount.load(ordering: .relaxed), acceptedCount.load(ordering: .relaxed))
    }

    /// Calls to `epoll_wait(2)` by the event loops that failed (other than `EINTR`) since start:
    /// each is followed by a 10 ms pause instead of a spin. None is expected.
    public var failedWaits: Int { waitFailures.load(ordering: .relaxed) }

    func accepted() {
        openCount.add(1, ordering: .relaxed)
        acceptedCount.add(1, ordering: .relaxed)
    }

    func closed() {
        openCount.subtract(1, ordering: .relaxed)
    }

    func waitFailed() {
        waitFailures.add(1, ordering: .relaxed)
    }
}
