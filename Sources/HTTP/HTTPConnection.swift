#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch

/// One accepted TCP connection: reads bytes into an `HTTPRequestParser`, hands requests to the
/// responder one at a time, in order, and writes each response before taking the next request
/// (so pipelined responses leave in order).
///
/// Locking: confined to its worker's thread — every mutable property is touched only there
/// (hence `@unchecked Sendable`). The responder's completion, which may run on any thread,
/// only hops back to that thread (see `complete`). Debug builds assert the confinement at the
/// entry points (`start`, `readable`, `writable`, `close`).
final class HTTPConnection: HTTPEventHandler, @unchecked Sendable {
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
        /// The request line's version; nil for a request that did not parse.
        var version: HTTPVersion?
        /// The request's headers (one retain), for the access log.
        var headers = HTTPHeaders()
    }

    let fd: Int32
    /// The address of the connection's peer, from accept(2); nil when not IPv4 or IPv6.
    let peer: IPAddress?
    let context: HTTPWorker
    var parser: HTTPRequestParser
    var phase = Phase.idle

    /// The connection's registration with `context.loop` (0: none yet).
    var registration: UInt64 = 0
    /// The epoll events asked for now.
    var interest: UInt32 = 0
    /// Not waiting for input (a request is in flight with enough buffered, or the peer closed).
    var readSuspended = true
    /// Not waiting to write (nothing is parked on a full socket buffer).
    var writeSuspended = true

    /// Counts requests, so a completion for an earlier one is recognised and dropped.
    var sequence: UInt64 = 0
    var inFlight: InFlight?
    /// A response delivered synchronously from inside `respond`.
    var syncResponse: HTTPResponse?
    /// What the responder asked to run should the client go away before the in-flight
    /// request's response is written (`HTTPClientAbort.onAbort`).
    var abortHandler: (@Sendable () -> Void)?

    /// The response being written (`HTTPResponse.none` between responses); its body and file
    /// part are cleared for a HEAD request and for statuses without content.
    var response = HTTPResponse.none
    /// The serialized head of `response`, reused from response to response.
    var head: [UInt8] = []
    var headSent = 0
    var bodySent = 0
    /// Bytes of `response.file` sent so far.
    var fileSent = 0
    var closeAfterResponse = false
    var lingerAfterResponse = false

    /// The peer shut its write side (read returned 0).
    var peerClosed = false
    /// Asked to close after the current response (server shutdown).
    var drainRequested = false
    /// When the first byte of the unfinished request arrived (0: none), ns.
    var requestStartedAt: UInt64 = 0
    /// When the unfinished request's head was complete and its body began (0: none yet), ns.
    var bodyStartedAt: UInt64 = 0
    /// Last read or write progress, ns.
    var lastActivity: UInt64
    /// When a lingering close gives up, ns.
    var lingerDeadline: UInt64 = 0

    init(fd: Int32, context: HTTPWorker, peer: IPAddress? = nil) {
        self.fd = fd
        self.peer = peer
        self.context = context
        parser = HTTPRequestParser(limits: context.limits)
        lastActivity = DispatchTime.now().uptimeNanoseconds
    }

    /// Registers with the worker's loop and starts reading. On the worker's thread.
    func start() {
        assert(context.isCurrent, "HTTPConnection.start off the worker's thread")
        readSuspended = false
        interest = clinux_epoll_in
        guard let id = context.loop.register(fd, events: interest, handler: self) else {
            close()
            return
        }
        registration = id
    }

    /// Ready for input, output, or an error or hang-up (always reported, even when neither is
    /// asked for: then the connection can make no progress and closes).
    func handleEvents(_ events: UInt32) {
        let failed = events & (clinux_epoll_err | clinux_epoll_hup) != 0
        if failed && readSuspended && writeSuspended {
            peerFailed()
            return
        }
        if !readSuspended && (events & clinux_epoll_in != 0 || failed) { readable() }
        if phase != .closed && !writeSuspended && (events & clinux_epoll_out != 0 || failed) { writable() }
    }

    /// Tells epoll what the connection waits for now, when that changed.
    func updateInterest() {
        guard phase != .closed, registration != 0 else { return }
        let wanted = (readSuspended ? 0 : clinux_epoll_in) | (writeSuspended ? 0 : clinux_epoll_out)
        guard wanted != interest else { return }
        interest = wanted
        if !context.loop.modify(fd, id: registration, events: wanted) { close() }
    }

    // MARK: Reading

    func resumeReading() {
        if readSuspended && !peerClosed && phase != .closed {
            readSuspended = false
            updateInterest()
        }
    }

    func suspendReading() {
        if !readSuspended {
            readSuspended = true
            updateInterest()
        }
    }

    /// The socket is readable: read what is there, then parse and dispatch.
    func readable() {
        assert(context.isCurrent, "HTTPConnection.readable off the worker's thread")
        if phase == .closed { return }
        if phase == .lingering { discardInput(); return }
        let buffer = context.readBuffer
        // At most `pipelineBufferLimit` bytes per call: then the buffered requests are answered
        // before more is read (epoll is level-triggered: the rest is reported again), so a
        // client that sends without reading is held to about that much, and cannot keep the
        // loop from its other connections.
        var readNow = 0
        while readNow < context.pipelineBufferLimit {
            if phase != .idle && parser.bufferedByteCount >= context.pipelineBufferLimit {
                suspendReading()
                break
            }
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 {
                parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                lastActivity = context.loop.roundStartedAt
                readNow += n
                if n < buffer.count { break }
            } else if n == 0 {
                peerClosed = true
                suspendReading()
                if phase == .awaitingResponse && parser.bufferedByteCount == 0 {
                    clientAborted()
                    return
                }
                break
            } else {
                let e = errno
                if e == EINTR { continue }
                if e == EAGAIN || e == EWOULDBLOCK { break }
                peerFailed()
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

    /// Closes the connection and its descriptor (which leaves epoll with it). Idempotent.
    /// On the worker's thread.
    /// A response cut off by the close (the client reset or closed it mid-write, a write
    /// stalled past the idle timeout, shutdown) is still reported, with its status and the body
    /// bytes that reached the kernel, as nginx logs it.
    func close() {
        assert(context.isCurrent, "HTTPConnection.close off the worker's thread")
        if phase == .closed { return }
        if phase == .writing && response.status != 0 {
            report(status: response.status, bodyBytes: max(0, bodySent + fileSent), headers: response.headers)
        }
        phase = .closed
        context.connections[ObjectIdentifier(self)] = nil
        if registration != 0 { context.loop.unregister(registration) }
        readSuspended = true
        writeSuspended = true
        response = HTTPResponse.none
        inFlight = nil
        syncResponse = nil
        abortHandler = nil
        _ = Glibc.close(fd)
        context.server.connectionClosed()
    }
}
