import Dispatch

/// One of the server's event loops and everything shared by the connections on it: the read
/// buffer, the cached `Date` line, the set of open connections and the sweep that applies
/// their timeouts once per `sweepInterval`.
///
/// Locking: confined to the loop's thread — every mutable property is read and written only
/// there, so no lock is needed (hence `@unchecked Sendable`); other threads reach it through
/// `execute`. Debug builds assert it at the entry points (`open`, `sweep`).
final class HTTPWorker: @unchecked Sendable {
    /// The thread (epoll) this worker's connections run on.
    let loop: HTTPEventLoop
    /// Which of the server's workers this is (`HTTPRequest.loopIndex`).
    let index: Int
    /// The server, for its settings and connection accounting.
    let server: HTTPServer
    let limits: HTTPParserLimits
    /// The server's responder, kept here so a request does not reach it through the server.
    let responder: any HTTPResponder
    /// `configuration.onExchange`, kept here so a response does not reach it through the server.
    let onExchange: (@Sendable (HTTPExchangeRecord) -> Void)?
    let headerTimeoutNanoseconds: UInt64
    let bodyTimeoutNanoseconds: UInt64
    let idleTimeoutNanoseconds: UInt64
    /// How long a connection closed after an error keeps discarding input, in ns.
    let lingerNanoseconds: UInt64 = 2_000_000_000
    /// Buffered-but-unprocessed bytes at which a connection with a request in flight stops
    /// reading, in bytes.
    let pipelineBufferLimit = 64 * 1024

    /// Scratch space every read on this worker goes through (64 KiB).
    let readBuffer: UnsafeMutableRawBufferPointer
    var dateCache = HTTPDateCache()
    var connections: [ObjectIdentifier: HTTPConnection] = [:]
    /// Set by `drain`: idle connections close, new ones are refused.
    var draining = false
    /// The connection inside `responder.respond` now (for `HTTPClientAbort.onAbort`); nil
    /// otherwise: set and cleared around the call.
    var dispatching: HTTPConnection?

    /// - Throws: `HTTPServerError.eventLoopFailed` when the loop's descriptors cannot be made.
    init(index: Int, server: HTTPServer, configuration: HTTPServerConfiguration) throws(HTTPServerError) {
        self.server = server
        self.index = index
        limits = configuration.parserLimits
        onExchange = configuration.onExchange
        responder = server.responder
        let header = Self.nanoseconds(configuration.headerTimeout)
        let body = Self.nanoseconds(configuration.bodyTimeout)
        let idle = Self.nanoseconds(configuration.idleTimeout)
        headerTimeoutNanoseconds = header
        bodyTimeoutNanoseconds = body
        idleTimeoutNanoseconds = idle
        loop = try HTTPEventLoop(name: "thumbd-http-\(index)", tickInterval: Self.sweepInterval(min(header, body), idle),
                                 counts: server.counts)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Whether the caller is running on the worker's thread.
    @inline(__always) var isCurrent: Bool { loop.isCurrent }

    /// Runs `block` on the worker's thread; from any thread.
    func execute(_ block: @escaping @Sendable () -> Void) { loop.execute(block) }

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        seconds <= 0 ? 0 : UInt64(min(seconds, 1e9) * 1e9)
    }

    /// Time between timeout sweeps, ns: a quarter of the shortest timeout, between 50 ms and 1 s.
    static func sweepInterval(_ header: UInt64, _ idle: UInt64) -> UInt64 {
        max(50_000_000, min(1_000_000_000, min(header, idle) / 4))
    }

    /// Starts the loop's thread and its sweeps. Call once.
    func start() {
        loop.start { [self] in sweep() }
    }

    /// Ends the loop (its thread, descriptors and references to this worker). From any thread.
    func stop() {
        loop.stop()
    }

    /// Takes over a freshly accepted socket. On the worker's thread.
    func open(fd: Int32, peer: IPAddress?) {
        assert(isCurrent, "HTTPWorker.open off the worker's thread")
        let connection = HTTPConnection(fd: fd, context: self, peer: peer)
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
        if draining { connection.close() }
    }

    /// Applies the header, body, idle, write-stall and linger timeouts. On the worker's thread.
    func sweep() {
        assert(isCurrent, "HTTPWorker.sweep off the worker's thread")
        let now = DispatchTime.now().uptimeNanoseconds
        for connection in Array(connections.values) { connection.sweep(now: now) }
    }

    /// Closes idle connections and asks busy ones to close after their current response.
    /// On the worker's thread.
    func drain() {
        draining = true
        for connection in Array(connections.values) { connection.drain() }
    }

    /// Closes every connection at once. On the worker's thread.
    func closeAll() {
        draining = true
        for connection in Array(connections.values) { connection.close() }
    }
}
