#if canImport(Glibc)
import Glibc
#endif

extension PeerClient {
    /// Why a call to a peer failed. Each case names the server (`host:port` as the upstream's
    /// `server` line spells it); any of them counts as a failed attempt for `PeerHealth`, as a
    /// connection error, a timeout or an invalid header does for nginx's `max_fails`
    /// (ngx_http_upstream_module, `proxy_next_upstream`'s `error`, `timeout`, `invalid_header`).
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The server string has no usable host and port, or getaddrinfo(3) found no address for
        /// the host; `reason` is gai_strerror's text or what is wrong with the string.
        case unresolvable(server: String, reason: String)
        /// Every address of the server refused the connection (ECONNREFUSED: nothing listens).
        case refused(server: String)
        /// connect(2) failed otherwise (EHOSTUNREACH, ENETUNREACH, ...), with that errno.
        case unreachable(server: String, errno: Int32)
        /// The connection broke during the exchange: send(2) or recv(2) failed with `errno`
        /// (ECONNRESET, EPIPE, ...).
        case connectionLost(server: String, errno: Int32)
        /// The whole exchange (connect, write, read) took longer than `milliseconds`.
        case timeout(server: String, milliseconds: Int)
        /// The response is not HTTP/1.x as RFC 9112 frames it (status line, header fields,
        /// `Content-Length`), uses `Transfer-Encoding` (refused, not decoded: thumbd's peers
        /// answer with `Content-Length`), or ended before its `Content-Length`; `reason` says which.
        case malformedResponse(server: String, reason: String)
        /// The body is longer than `limitBytes` (`PeerClient.maximumBodyBytes`, 4 MiB).
        case tooLarge(server: String, limitBytes: Int)

        /// The server the failed call went to.
        public var server: String {
            switch self {
            case .unresolvable(let server, _), .refused(let server), .unreachable(let server, _),
                 .connectionLost(let server, _), .timeout(let server, _), .malformedResponse(let server, _),
                 .tooLarge(let server, _):
                return server
            }
        }

        public var description: String {
            switch self {
            case .unresolvable(let server, let reason):
                return "peer \(server): cannot resolve: \(reason)"
            case .refused(let server):
                return "peer \(server): connection refused"
            case .unreachable(let server, let code):
                return "peer \(server): cannot connect: \(Self.text(code))"
            case .connectionLost(let server, let code):
                return "peer \(server): connection lost: \(Self.text(code))"
            case .timeout(let server, let milliseconds):
                return "peer \(server): no complete response within \(milliseconds) ms"
            case .malformedResponse(let server, let reason):
                return "peer \(server): malformed response: \(reason)"
            case .tooLarge(let server, let limit):
                return "peer \(server): response body over \(limit) bytes"
            }
        }

        /// strerror(3)'s text for `code`, with the number.
        private static func text(_ code: Int32) -> String {
            "\(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
