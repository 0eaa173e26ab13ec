import Foundation

/// Server settings; every option's doc gives its unit and default.
public struct HTTPServerConfiguration: Sendable {
    /// Address to listen on: an IPv4 literal, `"localhost"` (127.0.0.1), `"0.0.0.0"` for every
    /// interface, or an IPv6 literal (`"::1"`, `"::"`). No DNS lookups. `"127.0.0.1"` by default.
    public var host: String = "127.0.0.1"
    /// TCP port; `0` picks an ephemeral port, which `start()` returns. `8080` by default.
    public var port: UInt16 = 8080
    /// Length of the kernel's queue of connections not yet accepted (`listen(2)`). `1024` by default.
    public var backlog: Int32 = defaultBacklog
    /// Longest request line in bytes, without CRLF; longer → 414. `8192` by default.
    public var maxRequestLineBytes: Int = 8192
    /// Longest request line plus header fields, in bytes; longer → 431. `8192` by default.
    public var maxHeaderBytes: Int = 8192
    /// Longest request body (`Content-Length` or de-chunked), in bytes; longer → 413. `1 MiB` by default.
    public var maxBodyBytes: Int = 1 << 20
    /// Seconds allowed to receive a complete head once its first byte arrived; then 408 and
    /// close. `10` by default.
    public var headerTimeout: Double = 10
    /// Seconds allowed to receive a whole request body once its head is complete (after the
    /// `100 Continue` when one is sent), however steadily its bytes trickle in; then 408 and
    /// close (RFC 9110 §15.5.9), as nginx's `client_body_timeout` does for pauses. `10` by default.
    public var bodyTimeout: Double = 10
    /// Seconds an idle keep-alive connection is kept open, and the longest a client may leave a
    /// response unread; then the connection is closed silently. `75` by default.
    public var idleTimeout: Double = 75
    /// Open connections at which the server stops accepting (new ones wait in the kernel
    /// backlog) until one closes. `4096` by default.
    public var maxConnections: Int = 4096
    /// Number of event loops (threads running `epoll_wait`, one `HTTPWorker` each) the
    /// connections are spread over, round robin; at least 1 is made. The number of active
    /// processors by default.
    public var eventLoopCount: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Called once per response written, including the server's own error responses, on the
    /// connection's event-loop thread: keep it cheap. For a parse error the method and target are `""`.
    /// `nil` by default.
    public var onExchange: (@Sendable (HTTPExchangeRecord) -> Void)? = nil

    public init() {}

    /// Every field given: what an application's configuration maps (a field added here and not
    /// there does not compile). `backlog`: `defaultBacklog` unless the application has a setting.
    public init(host: String, port: UInt16, backlog: Int32, maxRequestLineBytes: Int, maxHeaderBytes: Int,
                maxBodyBytes: Int, headerTimeout: Double, bodyTimeout: Double, idleTimeout: Double, maxConnections: Int,
                eventLoopCount: Int, onExchange: (@Sendable (HTTPExchangeRecord) -> Void)?) {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.eventLoopCount = eventLoopCount
        self.onExchange = onExchange
    }

    /// The listening socket's backlog by default: 1024 (the kernel caps it at `net.core.somaxconn`).
    public static let defaultBacklog: Int32 = 1024

    /// The parser limits these settings imply.
    public var parserLimits: HTTPParserLimits {
        HTTPParserLimits(maxRequestLineBytes: maxRequestLineBytes, maxHeaderBytes: maxHeaderBytes,
                         maxBodyBytes: maxBodyBytes)
    }
}
