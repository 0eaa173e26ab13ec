#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// One accepted TCP connection: reads bytes into an `HTTPRequestParser`, hands requests to the
/// responder one at a time, in order, and writes each response before taking the next request
/// (so pipelined responses leave in order).
///
/// Locking: confined to `context.queue` — every mutable property is touched only on that serial
/// queue (hence `@unchecked Sendable`). The responder's completion, which may run on any
/// thread, only hops back to the queue (see `complete`).
final class HTTPConnection: @unchecked Sendable {
    /// What the connection is doing.
    enum Phase {
        /// Waiting for (the rest of) a request.
        case idle
        /// Inside the responder's `respond` call.
        case dispatching
        /// `respond` returned; waiting for its completion.
        case awaitingResponse
        /// Writing a response (possibly parked on a full socket buffer).
        case writing
        /// After an error response: write side shut, input discarded until EOF or the deadline.
        case lingering
        /// Closed; late completions are dropped.
        case closed
    }

    /// The request whose response is being produced or written.
    struct InFlight {
        var method: String
        var target: String
        var isHead: Bool
        var keepAlive: Bool
        var isHTTP10: Bool
        /// When the request's last byte was read, in ns of `DispatchTime`.
        var parsedAt: UInt64
    }

    let fd: Int32
    let context: HTTPConnectionQueue
    var parser: HTTPRequestParser
    var phase = Phase.idle

    let readSource: DispatchSourceRead
    var readSuspended = true
    var writeSource: DispatchSourceWrite?
    var writeSuspended = true
    /// Sources not yet through their cancel handler; the fd is closed when this reaches 0.
    var liveSources = 1

    /// Counts requests, so a completion for an earlier one is recognised and dropped.
    var sequence: UInt64 = 0
    var inFlight: InFlight?
    /// A response delivered synchronously from inside `respond`.
    var syncResponse: HTTPResponse?

    // The response being written: `head` is reused from response to response.
    var head: [UInt8] = []
    var body: [UInt8] = []
    var headSent = 0
    var bodySent = 0
    var responseStatus = 0
    var responseHeaders = HTTPHeaders()
    var closeAfterResponse = false
    var lingerAfterResponse = false

    /// The peer shut its write side (read returned 0).
    var peerClosed = false
    /// Asked to close after the current response (server shutdown).
    var drainRequested = false
    /// When the first byte of the unfinished request arrived (0: none), ns.
    var requestStartedAt: UInt64 = 0
    /// Last read or write progress, ns.
    var lastActivity: UInt64
    /// When a lingering close gives up, ns.
    var lingerDeadline: UInt64 = 0

    init(fd: Int32, context: HTTPConnectionQueue) {
        self.fd = fd
        self.context = context
        parser = HTTPRequestParser(limits: context.limits)
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: context.queue)
        lastActivity = DispatchTime.now().uptimeNanoseconds
    }

    /// Installs the handlers and starts reading. On the queue.
    func start() {
        readSource.setEventHandler { [self] in readable() }
        readSource.setCancelHandler { [self] in sourceCancelled() }
        resumeReading()
    }

    // MARK: Reading

    func resumeReading() {
        if readSuspended && !peerClosed && phase != .closed {
            readSuspended = false
            readSource.resume()
        }
    }

    func suspendReading() {
        if !readSuspended {
            readSuspended = true
            readSource.suspend()
        }
    }

    /// The read source fired: read what is there, then parse and dispatch.
    func readable() {
        if phase == .closed { return }
        if phase == .lingering { discardInput(); return }
        let buffer = context.readBuffer
        while true {
            if phase != .idle && parser.bufferedByteCount >= context.pipelineBufferLimit {
                suspendReading()
                break
            }
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 {
                parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                lastActivity = DispatchTime.now().uptimeNanoseconds
                if n < buffer.count { break }
            } else if n == 0 {
                peerClosed = true
                suspendReading()
                break
            } else {
                let e = errno
                if e == EINTR { continue }
                if e == EAGAIN || e == EWOULDBLOCK { break }
                close()
                return
            }
        }
        if phase == .idle { drive() }
    }

    /// Reads and drops input while lingering; closes on EOF or error.
    func discardInput() {
        let buffer = context.readBuffer
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            close()
            return
        }
    }

    // MARK: Closing

    /// Closes the connection: cancels its sources; the fd is closed once both cancel handlers
    /// ran. Idempotent. On the queue.
    func close() {
        if phase == .closed { return }
        phase = .closed
        context.connections[ObjectIdentifier(self)] = nil
        readSource.cancel()
        if readSuspended { readSuspended = false; readSource.resume() }
        if let w = writeSource {
            w.cancel()
            if writeSuspended { writeSuspended = false; w.resume() }
        }
        body = []
        inFlight = nil
        syncResponse = nil
    }

    func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 {
            _ = Glibc.close(fd)
            context.server.connectionClosed()
        }
    }
}
