#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch

/// Writing responses: head and body go to `sendmsg` as two buffers (the body is the responder's
/// array, never copied), then a file part with `sendfile(2)`; on EAGAIN the rest is parked and
/// resumed when epoll reports the socket writable (asked for only while something is parked).
extension HTTPConnection {
    /// Serializes `response` for the in-flight request and starts writing it. On return the
    /// phase is `.idle` (written, keep going), `.writing` (parked), `.lingering` or `.closed`.
    ///
    /// The response is moved into `response` and stays there until it is written (its body
    /// and file part are sent from it, and its headers go to the exchange record): one
    /// response costs no copies of its arrays or references.
    func startWrite(_ response: consuming HTTPResponse) {
        guard inFlight != nil else { return }
        phase = .writing
        abortHandler = nil
        closeAfterResponse = lingerAfterResponse || inFlight?.keepAlive != true || drainRequested
            || context.draining
        let directive: HTTPResponseSerializer.ConnectionDirective =
            closeAfterResponse ? .close : (inFlight?.isHTTP10 == true ? .keepAlive : .none)
        HTTPResponseSerializer.writeHead(into: &head, response: response, connection: directive,
                                         dateLine: context.dateCache.currentLine())
        if inFlight?.isHead == true || HTTPStatus.hasNoContent(response.status) {
            response.body = []
            response.file = nil
        }
        headSent = 0
        bodySent = 0
        fileSent = 0
        self.response = response
        if flush() { responseWritten() }
    }

    /// Writes as much of the parked response as the socket takes. True when all of it is
    /// written; false when parked on EAGAIN (waiting for EPOLLOUT) or the connection closed.
    func flush() -> Bool {
        // Taken out of the connection while they are sent: reading a class's array inside a
        // closure would retain it for every call.
        var head: [UInt8] = []
        var body: [UInt8] = []
        swap(&head, &self.head)
        swap(&body, &response.body)
        defer {
            swap(&head, &self.head)
            swap(&body, &response.body)
        }
        while true {
            let headLeft = head.count - headSent
            let bodyLeft = body.count - bodySent
            if headLeft == 0 && bodyLeft == 0 { return flushFile() }
            let more = response.file != nil
            let n = head.withUnsafeBytes { h in
                body.withUnsafeBytes { b in
                    Self.sendHeadAndBody(fd, h.baseAddress.map { $0 + headSent }, headLeft,
                                         b.baseAddress.map { $0 + bodySent }, bodyLeft, more: more)
                }
            }
            if n > 0 {
                let fromHead = min(n, headLeft)
                headSent += fromHead
                bodySent += n - fromHead
                if bodySent < body.count || headSent < head.count {
                    lastActivity = DispatchTime.now().uptimeNanoseconds
                }
                continue
            }
            if retriesAfterFailedWrite(n) { continue }
            return false
        }
    }

    /// One `sendmsg(2)` of up to two buffers (head, body). With a file part to follow, MSG_MORE
    /// lets the kernel put the head in the same segment as the file's first bytes (nginx's
    /// tcp_nopush).
    static func sendHeadAndBody(_ fd: Int32, _ head: UnsafeRawPointer?, _ headCount: Int,
                                _ body: UnsafeRawPointer?, _ bodyCount: Int, more: Bool) -> Int {
        var iov = (iovec(), iovec())
        return withUnsafeMutableBytes(of: &iov) { raw -> Int in
            let v = raw.bindMemory(to: iovec.self)
            var count = 0
            if headCount > 0, let head {
                v[0] = iovec(iov_base: UnsafeMutableRawPointer(mutating: head), iov_len: headCount)
                count = 1
            }
            if bodyCount > 0, let body {
                v[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: body), iov_len: bodyCount)
                count += 1
            }
            var message = msghdr()
            message.msg_iov = v.baseAddress
            message.msg_iovlen = count
            return sendmsg(fd, &message, more ? Int32(MSG_MORE) : 0)
        }
    }

    /// After a write that sent nothing (`n` ≤ 0): true to try again (EINTR); otherwise parks
    /// the rest until the socket is writable (EAGAIN) or closes the connection, and is false.
    func retriesAfterFailedWrite(_ n: Int) -> Bool {
        let e = errno
        if n < 0 && e == EINTR { return true }
        if n < 0 && (e == EAGAIN || e == EWOULDBLOCK) {
            lastActivity = DispatchTime.now().uptimeNanoseconds
            waitToWrite()
        } else {
            close()
        }
        return false
    }

    /// Sends the file part with `sendfile(2)`. True when all of it is sent (or there is none);
    /// false when parked on EAGAIN or the connection closed (an error, or the file ended early:
    /// the client must not take a short body for the whole).
    func flushFile() -> Bool {
        guard let region = response.file else { return true }
        while fileSent < region.count {
            var offset = off_t(region.offset + fileSent)
            let n = sendfile(fd, region.fd, &offset, region.count - fileSent)
            if n > 0 {
                fileSent += n
                continue
            }
            if retriesAfterFailedWrite(n) { continue }
            return false
        }
        return true
    }

    /// The whole response is with the kernel: report it, then keep the connection, linger or close.
    func responseWritten() {
        let now = DispatchTime.now().uptimeNanoseconds
        report(status: response.status, bodyBytes: response.contentLength, headers: response.headers, at: now)
        inFlight = nil
        response = HTTPResponse.none
        lastActivity = now
        if lingerAfterResponse {
            startLingering()
        } else if closeAfterResponse {
            closeAfterLastResponse()
        } else {
            phase = .idle
        }
    }

    /// Tells `onExchange` how the in-flight request ended: its response written (in full, or as
    /// far as it got before the connection closed), or 499 when its client went away first.
    func report(status: Int, bodyBytes: Int, headers: HTTPHeaders, at now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        guard let onExchange = context.onExchange, let request = inFlight else { return }
        var record = HTTPExchangeRecord(method: request.method, target: request.target, status: status,
                                        bodyBytes: bodyBytes, durationNanoseconds: now &- request.parsedAt,
                                        responseHeaders: headers)
        record.loopIndex = context.index
        record.peer = peer
        record.version = request.version
        record.requestHeaders = request.headers
        onExchange(record)
    }

    /// Waits for the socket to take more of a parked write.
    func waitToWrite() {
        if writeSuspended {
            writeSuspended = false
            updateInterest()
        }
    }

    func stopWaitingToWrite() {
        if !writeSuspended {
            writeSuspended = true
            updateInterest()
        }
    }

    /// The socket can take more of the parked response.
    func writable() {
        assert(context.isCurrent, "HTTPConnection.writable off the worker's thread")
        guard phase == .writing else { stopWaitingToWrite(); return }
        if flush() {
            stopWaitingToWrite()
            responseWritten()
            if phase == .idle { drive() }
        }
    }

    /// After the last response (`Connection: close`, a drain): a plain close when the client
    /// has sent nothing more; with request bytes unread (buffered, or still in the kernel), a
    /// close would make the kernel answer with a reset that destroys the response's unsent end,
    /// so the connection lingers instead (RFC 9112 §9.6).
    func closeAfterLastResponse() {
        if parser.bufferedByteCount > 0 || clinux_unread_bytes(fd) != 0 {
            startLingering()
        } else {
            close()
        }
    }

    /// After an error response, or a last one with input unread: shut the write side so the
    /// client sees the response and EOF, and discard input for a while, so unread request bytes
    /// do not turn the close into a reset that destroys the response (RFC 9112 §9.6).
    func startLingering() {
        phase = .lingering
        lingerDeadline = DispatchTime.now().uptimeNanoseconds &+ context.lingerNanoseconds
        _ = shutdown(fd, Int32(SHUT_WR))
        parser = HTTPRequestParser(limits: context.limits)
        if peerClosed {
            close()
        } else {
            resumeReading()
            discardInput()
        }
    }
}
