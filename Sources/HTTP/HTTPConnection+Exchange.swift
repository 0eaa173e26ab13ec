#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Requests in, responses out: one request at a time per connection, in order; the
/// responder's completion may come from any thread and hops back to the connection's worker.
extension HTTPConnection {
    /// Takes buffered requests out of the parser and dispatches them, one at a time, for as
    /// long as responses complete synchronously. On the worker's thread, when `phase == .idle`.
    func drive() {
        while phase == .idle {
            if drainRequested { closeAfterLastResponse(); return }
            let request: HTTPRequest?
            do {
                request = try parser.nextRequest()
            } catch {
                sendError(error)
                return
            }
            guard var request = consume request else {
                waitForMoreInput()
                return
            }
            requestStartedAt = 0
            bodyStartedAt = 0
            request.loopIndex = context.index
            request.clientAbort = HTTPClientAbort(worker: context)
            dispatch(request)
        }
    }

    func waitForMoreInput() {
        if peerClosed { close(); return }
        if parser.takeContinueExpectation() {
            // An interim response (RFC 9110 §15.2.1). No response is in flight, but an earlier one
            // may still fill the send buffer: if the 25 bytes do not all go, skip the interim
            // when none went (the client sends the body anyway after a wait, RFC 9110 §10.1.1),
            // and close when some went, since a torn status line cannot be mended.
            let interim = "HTTP/1.1 100 Continue\r\n\r\n"
            let n = interim.utf8.withContiguousStorageIfAvailable { send(fd, $0.baseAddress, $0.count, 0) } ?? -1
            if n > 0 && n < interim.utf8.count {
                close()
                return
            }
        }
        if parser.isMidRequest {
            let now = DispatchTime.now().uptimeNanoseconds
            if requestStartedAt == 0 { requestStartedAt = now }
            if !parser.isInHead && bodyStartedAt == 0 { bodyStartedAt = now }
        } else {
            requestStartedAt = 0
            bodyStartedAt = 0
        }
        resumeReading()
    }

    /// Hands one request to the responder.
    func dispatch(_ request: HTTPRequest) {
        sequence &+= 1
        let seq = sequence
        let keepAlive = Self.wantsKeepAlive(request)
        inFlight = InFlight(method: request.method, target: request.target,
                            isHead: request.method == "HEAD", keepAlive: keepAlive,
                            isHTTP10: request.version.minor == 0,
                            parsedAt: DispatchTime.now().uptimeNanoseconds, version: request.version,
                            headers: request.headers)
        phase = .dispatching
        context.dispatching = self
        context.responder.respond(to: request) { [self] response in
            complete(seq, response)
        }
        context.dispatching = nil
        if let response = syncResponse.take() {
            startWrite(response)
        } else if phase == .dispatching {
            phase = .awaitingResponse
        }
    }

    /// The responder's completion, on any thread: a response given synchronously from inside
    /// `respond` is picked up by `dispatch`; any other hops to the worker's thread.
    func complete(_ seq: UInt64, _ response: HTTPResponse) {
        if context.isCurrent && phase == .dispatching && seq == sequence {
            if syncResponse == nil { syncResponse = response }
            return
        }
        context.execute { [self] in
            guard phase == .awaitingResponse && seq == sequence else { return }
            startWrite(response)
            if phase == .idle { drive() }
        }
    }

    /// HTTP/1.1 keeps the connection unless `Connection: close`; HTTP/1.0 closes it unless
    /// `Connection: keep-alive` without `close` (RFC 9112 §9.3). An HTTP/1.0 request with a
    /// `Transfer-Encoding` is answered, then the connection closes: its framing is treated as
    /// faulty (RFC 9112 §6.1), so nothing after it on the connection is trusted.
    /// Scans the `Connection` values' bytes (no `Character` walk, no allocation: a browser
    /// sends `Connection: keep-alive` with every request).
    static func wantsKeepAlive(_ request: HTTPRequest) -> Bool {
        let closes = request.headers.containsValue(named: "Connection", where: { HTTPFieldList.contains($0, token: "close") })
        if request.version.minor >= 1 { return !closes }
        return !closes && !request.headers.contains("Transfer-Encoding")
            && request.headers.containsValue(named: "Connection", where: { HTTPFieldList.contains($0, token: "keep-alive") })
    }

    /// The client closed, reset or shut its sending side while its response was being produced
    /// (with no further request buffered: a client that pipelines and then half-closes is still
    /// answered): reported with status 499, as nginx logs it; the responder's abort handler
    /// runs, and the connection closes. A response that comes later is dropped.
    func clientAborted() {
        let handler = abortHandler.take()
        report(status: HTTPStatus.clientClosedRequest, bodyBytes: 0, headers: HTTPHeaders())
        close()
        handler?()
    }

    /// The peer failed (a reset, a hang-up, a read error): an abort while a response is being
    /// produced (`clientAborted`), otherwise a plain close.
    func peerFailed() {
        if phase == .awaitingResponse { clientAborted() } else { close() }
    }

    /// Answers a parse error or timeout with the JSON error body, then closes (lingering).
    func sendError(_ error: HTTPParseError) {
        inFlight = InFlight(method: "", target: "", isHead: false, keepAlive: false, isHTTP10: false,
                            parsedAt: DispatchTime.now().uptimeNanoseconds)
        lingerAfterResponse = true
        startWrite(HTTPErrorResponse.make(status: error.status, code: error.code, message: error.message))
    }
}
