/// Size limits the request parser enforces while bytes arrive, so no request can make it buffer
/// more than about `maxHeaderBytes + maxBodyBytes`.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Longest request line, in bytes without its CRLF; longer → 414 (RFC 9112 §3). `8192` by default.
    public var maxRequestLineBytes: Int = 8192
    /// Longest head (request line plus header fields with their line ends, without the final
    /// empty line), and longest trailer section, in bytes; longer → 431 (RFC 6585 §5). `8192` by default.
    public var maxHeaderBytes: Int = 8192
    /// Longest body, declared by `Content-Length` or de-chunked, in bytes; longer → 413.
    /// `1 MiB` by default.
    public var maxBodyBytes: Int = 1 << 20

    public init() {}

    public init(maxRequestLineBytes: Int, maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }
}
