#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTP/1.1 client for node-to-node calls (a node forwarding the prefetch items
/// another node owns to that node): one request per connection (`Connection: close`, RFC 9112
/// §9.6), over POSIX sockets, on the calling thread.
///
/// The whole exchange, from connect(2) through the last byte of the response, is bounded by one
/// deadline of `timeoutMilliseconds`, as nginx bounds a proxied request by its
/// `proxy_connect_timeout` / `proxy_read_timeout` (here one budget for all of it). Name lookup
/// (getaddrinfo(3)) is not bounded by it: it has no timeout of its own, and is immediate for
/// numeric addresses and names in /etc/hosts, which is how an upstream's servers are written.
/// The deadline is checked once it returns.
///
/// Responses are framed as RFC 9112 §6.3 says: no body for HEAD, 1xx, 204 and 304; else by
/// `Content-Length`; else to the end of the connection. `Transfer-Encoding` (chunked) responses
/// are refused as `Failure.malformedResponse`, not decoded: thumbd's peers always send
/// `Content-Length`. Bodies over `maximumBodyBytes` (4 MiB) fail with `Failure.tooLarge`.
public struct PeerClient: Sendable {
    /// The longest response body accepted, in bytes: 4 MiB (4,194,304). A peer's answer to a
    /// forwarded prefetch is a small JSON object; anything this large is not one.
    public static let maximumBodyBytes = 4 * 1024 * 1024
    /// The longest response header section (status line and fields) accepted, in bytes: 64 KiB.
    public static let maximumHeadBytes = 64 * 1024

    /// The budget of one whole exchange (connect, write, read), in milliseconds: thumbd's
    /// `peer_timeout_seconds` × 1,000. `2000` by default.
    public let timeoutMilliseconds: Int

    /// A client whose calls each take at most `timeoutMilliseconds` (`2000` by default; at least 1).
    public init(timeoutMilliseconds: Int = 2_000) {
        self.timeoutMilliseconds = max(1, timeoutMilliseconds)
    }

    /// Sends one request to `server` and reads its response.
    ///
    /// - Parameters:
    ///   - method: the request method, e.g. `"POST"` (RFC 9110 §9).
    ///   - server: `host:port` exactly as the upstream's `server` line spells it: an IPv4
    ///     address, a name, or an IPv6 address in brackets (`[::1]:8080`); without `:port`, port
    ///     80, nginx's default. `unix:` paths are not supported. It is also the `Host` field
    ///     (RFC 9112 §3.2: the target URI's authority).
    ///   - path: the request target in origin-form (RFC 9112 §3.2.1), e.g. `/prefetch`, already
    ///     percent-encoded; sent as given.
    ///   - headers: more header fields, sent in order. `Host`, `Content-Length`, `Connection`
    ///     and `Transfer-Encoding` given here are left out: the client writes its own. A name or
    ///     value containing CR, LF or NUL is left out too (it would split the request).
    ///   - body: the request content, sent with `Content-Length` (RFC 9112 §6.2); the field is
    ///     also sent, as 0, for an empty POST, PUT or PATCH (RFC 9110 §8.6).
    /// - Returns: the final (non-1xx) response: any status, 4xx and 5xx included.
    /// - Throws: `Failure`: `unresolvable`, `refused`, `unreachable`, `connectionLost`,
    ///   `timeout` (past `timeoutMilliseconds`), `malformedResponse`, `tooLarge`.
    public func send(method: String, server: String, path: String,
                     headers: [(String, String)] = [], body: [UInt8] = []) throws(Failure) -> PeerResponse {
        let deadline = Self.monotonicNanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        let request = Self.request(method: method, server: server, path: path, headers: headers, body: body)
        let connection = try PeerConnection.open(server: server, deadline: deadline, timeoutMilliseconds: timeoutMilliseconds)
        defer { connection.close() }
        try connection.write(request)
        return try connection.readResponse(noBody: method == "HEAD")
    }

    /// The request's bytes: request line (RFC 9112 §3), `Host`, the caller's fields,
    /// `Content-Length`, `Connection: close`, the empty line, the body.
    static func request(method: String, server: String, path: String,
                        headers: [(String, String)], body: [UInt8]) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(server)\r\n"
        let reserved: Set<String> = ["host", "content-length", "connection", "transfer-encoding"]
        for (name, value) in headers where !reserved.contains(name.lowercased()) {
            let splits = (name + value).utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
            if !splits { head += "\(name): \(value)\r\n" }
        }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// CLOCK_MONOTONIC in nanoseconds (the clock poll(2)'s timeouts follow).
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
