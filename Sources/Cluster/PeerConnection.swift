#if canImport(Glibc)
import Glibc
#endif

/// One non-blocking TCP connection of `PeerClient` to a peer, every wait on it a poll(2) bounded
/// by the exchange's deadline. Used by one thread, for one request, then closed.
struct PeerConnection {
    let fd: Int32
    let server: String
    /// CLOCK_MONOTONIC nanoseconds at which the exchange has taken too long.
    let deadline: UInt64
    /// The budget the deadline came from, for `Failure.timeout`'s message.
    let timeoutMilliseconds: Int

    /// A connection to `server` (`host:port`, `[v6]:port`, `host`: port 80, nginx's default):
    /// its addresses from getaddrinfo(3), tried in order until one accepts before `deadline`
    /// (a non-blocking connect(2), then poll(2) for POLLOUT and `SO_ERROR`).
    /// - Throws: `Failure.unresolvable`, `.refused` (every address refused), `.unreachable`
    ///   (the last address's errno otherwise), `.timeout`.
    static func open(server: String, deadline: UInt64, timeoutMilliseconds: Int) throws(PeerClient.Failure) -> PeerConnection {
        let (host, port) = try address(of: server)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port, &hints, &list)
        guard status == 0, let first = list else {
            throw .unresolvable(server: server, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }

        var refusedEverywhere = true, lastErrno: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry?.pointee {
            entry = info.ai_next
            let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
            guard fd >= 0 else { lastErrno = errno; refusedEverywhere = false; continue }
            let connection = PeerConnection(fd: fd, server: server, deadline: deadline, timeoutMilliseconds: timeoutMilliseconds)
            var code: Int32 = Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 ? 0 : errno
            if code == EINPROGRESS || code == EINTR {   // after EINTR too the connect goes on (connect(2))
                do { try connection.wait(for: Int16(POLLOUT)) } catch { connection.close(); throw error }
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
            }
            if code == 0 { return connection }
            connection.close()
            lastErrno = code
            if code != ECONNREFUSED { refusedEverywhere = false }
        }
        throw refusedEverywhere ? .refused(server: server) : .unreachable(server: server, errno: lastErrno)
    }

    /// `server` split into getaddrinfo's host (brackets of an IPv6 address removed) and port,
    /// as nginx's `server` directive reads it (ngx_parse_url: port 80 when none is written).
    /// - Throws: `Failure.unresolvable` for `unix:` paths, an empty host or a port outside 1...65535.
    static func address(of server: String) throws(PeerClient.Failure) -> (host: String, port: String) {
        if server.lowercased().hasPrefix("unix:") {
            throw .unresolvable(server: server, reason: "unix: sockets are not supported")
        }
        let (hostBytes, portBytes) = PeerRing.hostAndPort(server)
        var host = String(decoding: hostBytes, as: UTF8.self)
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 { host = String(host.dropFirst().dropLast()) }
        let port = portBytes.isEmpty ? "80" : String(decoding: portBytes, as: UTF8.self)
        guard !host.isEmpty, !host.contains("["), let number = Int(port), (1...65535).contains(number) else {
            throw .unresolvable(server: server, reason: "not HOST:PORT with a port 1...65535")
        }
        return (host, String(number))
    }

    /// Writes every byte of `bytes` (send(2) with MSG_NOSIGNAL: a closed peer is EPIPE, not SIGPIPE).
    /// - Throws: `Failure.connectionLost`, `.timeout`.
    func write(_ bytes: [UInt8]) throws(PeerClient.Failure) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; continue }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .connectionLost(server: server, errno: code) }
            try wait(for: Int16(POLLOUT))
        }
    }

    /// Reads the next bytes into `buffer`, at most `limit` of them; false at the end of the stream.
    /// - Throws: `Failure.connectionLost`, `.timeout`.
    func read(into buffer: inout [UInt8], limit: Int = 64 * 1024) throws(PeerClient.Failure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: limit)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { buffer += chunk[..<n]; return true }
            if n == 0 { return false }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .connectionLost(server: server, errno: code) }
            try wait(for: Int16(POLLIN))
        }
    }

    /// The final response (RFC 9112 §6.3 framing; interim 1xx responses skipped), the body
    /// left out when `noBody` (a response to HEAD).
    /// - Throws: `Failure.malformedResponse`, `.tooLarge`, `.connectionLost`, `.timeout`.
    func readResponse(noBody: Bool) throws(PeerClient.Failure) -> PeerResponse {
        var buffer: [UInt8] = []
        while true {
            var headLength = PeerResponseHead.length(in: buffer)
            while headLength == nil {
                if buffer.count > PeerClient.maximumHeadBytes {
                    throw .malformedResponse(server: server, reason: "header section over \(PeerClient.maximumHeadBytes) bytes")
                }
                guard try read(into: &buffer) else {
                    throw .malformedResponse(server: server, reason: buffer.isEmpty ? "closed without a response" : "closed inside the header section")
                }
                headLength = PeerResponseHead.length(in: buffer)
            }
            let head = try PeerResponseHead.parse(buffer[..<headLength!], server: server)
            buffer.removeFirst(headLength!)
            if head.status == 101 {
                throw .malformedResponse(server: server, reason: "101 Switching Protocols to a request that asked for no upgrade")
            }
            if head.status < 200 { continue }   // 100 Continue, 103 Early Hints: the final response follows

            let limit = PeerClient.maximumBodyBytes
            var body: [UInt8]
            switch try head.framing(toHead: noBody, server: server) {
            case .none:
                body = []
            case .length(let length):
                guard length <= limit else { throw .tooLarge(server: server, limitBytes: limit) }
                while buffer.count < length {
                    guard try read(into: &buffer, limit: min(64 * 1024, length - buffer.count)) else {
                        throw .malformedResponse(server: server, reason: "closed after \(buffer.count) of \(length) body bytes")
                    }
                }
                body = Array(buffer.prefix(length))
            case .untilClose:
                while try read(into: &buffer) {
                    if buffer.count > limit { throw .tooLarge(server: server, limitBytes: limit) }
                }
                body = buffer
            }
            return PeerResponse(status: head.status, reason: head.reason, headers: head.headers, body: body)
        }
    }

    /// Waits until `events` (POLLIN or POLLOUT) are ready, or an error or hang-up, which the
    /// next call reports.
    /// - Throws: `Failure.timeout` once the deadline has passed.
    func wait(for events: Int16) throws(PeerClient.Failure) {
        while true {
            let now = PeerClient.monotonicNanoseconds()
            guard now < deadline else { throw .timeout(server: server, milliseconds: timeoutMilliseconds) }
            let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw .connectionLost(server: server, errno: errno) }
        }
    }

    func close() {
        _ = Glibc.close(fd)
    }
}
