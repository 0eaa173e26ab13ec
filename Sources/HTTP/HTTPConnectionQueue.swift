import Dispatch

/// One of the server's serial queues and everything shared by the connections on it: the read
/// buffer, the cached `Date` line, the set of open connections and the timer that sweeps them
/// for timeouts once per `sweepInterval`.
///
/// Locking: confined to `queue` — every mutable property is read and written only on it, so no
/// lock is needed (hence `@unchecked Sendable`).
final class HTTPConnectionQueue: @unchecked Sendable {
    /// Marks `queue` so code can tell it is running on it (see `isCurrent`).
    static let specificKey = DispatchSpecificKey<ObjectIdentifier>()

    /// The serial queue this object is confined to.
    let queue: DispatchQueue
    /// The server, for its responder, settings and connection accounting.
    let server: HTTPServer
    let limits: HTTPParserLimits
    let headerTimeoutNanoseconds: UInt64
    let idleTimeoutNanoseconds: UInt64
    /// How long a connection closed after an error keeps discarding input, in ns.
    let lingerNanoseconds: UInt64 = 2_000_000_000
    /// Buffered-but-unprocessed bytes at which a connection with a request in flight stops
    /// reading, in bytes.
    let pipelineBufferLimit = 64 * 1024

    /// Scratch space every read on this queue goes through (64 KiB).
    let readBuffer: UnsafeMutableRawBufferPointer
    var dateCache = HTTPDateCache()
    var connections: [ObjectIdentifier: HTTPConnection] = [:]
    /// Set by `shutdown`: idle connections close, new ones are refused.
    var draining = false
    private var timer: DispatchSourceTimer?

    init(index: Int, server: HTTPServer, configuration: HTTPServerConfiguration) {
        queue = DispatchQueue(label: "thumbd.http.connections.\(index)")
        self.server = server
        limits = configuration.parserLimits
        headerTimeoutNanoseconds = Self.nanoseconds(configuration.headerTimeout)
        idleTimeoutNanoseconds = Self.nanoseconds(configuration.idleTimeout)
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        queue.setSpecific(key: Self.specificKey, value: ObjectIdentifier(self))
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Whether the caller is running on `queue`.
    @inline(__always) var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.specificKey) == ObjectIdentifier(self)
    }

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        seconds <= 0 ? 0 : UInt64(min(seconds, 1e9) * 1e9)
    }

    /// Seconds between timeout sweeps: a quarter of the shortest timeout, between 50 ms and 1 s.
    var sweepInterval: Double {
        let shortest = Double(min(headerTimeoutNanoseconds, idleTimeoutNanoseconds)) / 1e9
        return max(0.05, min(1.0, shortest / 4))
    }

    /// Starts the sweep timer. Call once, from any thread.
    func startTimer() {
        queue.async {
            let t = DispatchSource.makeTimerSource(queue: self.queue)
            let interval = self.sweepInterval
            t.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(Int(interval * 100)))
            t.setEventHandler { self.sweep() }
            self.timer = t
            t.resume()
        }
    }

    /// Stops the sweep timer. On `queue`.
    func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    /// Takes over a freshly accepted socket. On `queue`.
    func open(fd: Int32) {
        let connection = HTTPConnection(fd: fd, context: self)
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
        if draining { connection.close() }
    }

    /// Applies the header, body, idle, write-stall and linger timeouts. On `queue`.
    func sweep() {
        let now = DispatchTime.now().uptimeNanoseconds
        for connection in Array(connections.values) { connection.sweep(now: now) }
    }

    /// Closes idle connections and asks busy ones to close after their current response. On `queue`.
    func drain() {
        draining = true
        for connection in Array(connections.values) { connection.drain() }
    }

    /// Closes every connection at once. On `queue`.
    func closeAll() {
        draining = true
        for connection in Array(connections.values) { connection.close() }
    }
}
