/// The request and response values that cross the boundary between the socket server and the
/// application (the `HTTPResponder`). The server parses into `HTTPRequest` and serializes
/// `HTTPResponse`; nothing here knows about thumbnails.
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP version as sent on the request line (RFC 9112 §2.3).
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public init(major: Int, minor: Int) { self.major = major; self.minor = minor }
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A parsed request. `target` is the request-target exactly as sent (origin-form, still
/// percent-encoded); `path` and `query` split it at the first `?`.
public struct HTTPRequest: Sendable {
    public var method: String
    /// Setting it again finds its `?` again.
    public var target: String {
        didSet { queryMark = Self.queryMark(in: target) }
    }
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// The request body, de-chunked when it came with `Transfer-Encoding: chunked`. Empty when none.
    public var body: [UInt8]
    /// Which of the server's event loops read the request, `0..<eventLoopCount` (0 outside a
    /// server): a responder may keep per-loop state (memos, watches) that the other loops'
    /// threads never touch, so that a request shares no lock or reference count with them.
    public var loopIndex = 0
    /// Tells the responder when the client goes away before the response is written (inert
    /// outside a server).
    public var clientAbort = HTTPClientAbort()

    public init(method: String, target: String, version: HTTPVersion = .http1_1,
                headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        queryMark = Self.queryMark(in: target)
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target up to (not including) the first `?`, still percent-encoded.
    public var path: Substring {
        if let q = queryMark { return target[..<q] }
        return target[...]
    }

    /// The target after the first `?`, still percent-encoded; nil when there is no `?`.
    public var query: Substring? {
        guard let q = queryMark else { return nil }
        return target[target.utf8.index(after: q)...]
    }

    /// Where the first `?` is: found once, over UTF-8 bytes (a `Character` search costs a
    /// grapheme walk per byte, and routing asks for `path` several times per request).
    private var queryMark: String.Index?

    private static func queryMark(in target: String) -> String.Index? {
        var target = target
        target.makeContiguousUTF8()
        let offset = target.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            guard let base = bytes.baseAddress, let mark = memchr(base, Int32(UInt8(ascii: "?")), bytes.count) else { return nil }
            return UnsafeRawPointer(mark) - UnsafeRawPointer(base)
        } ?? nil
        return offset.map { target.utf8.index(target.utf8.startIndex, offsetBy: $0) }
    }
}

/// A response to serialize. The server adds `Content-Length` (from `contentLength`), `Date`
/// and, when it will close the connection, `Connection: close`; the responder must not set them.
/// For a `HEAD` request the server sends the headers of this response and no body bytes.
public struct HTTPResponse: Sendable {
    /// The status code, 100...599 (RFC 9110 §15).
    public var status: Int
    public var headers: HTTPHeaders
    /// The body bytes. Shared, not copied, when the same array is handed to many responses.
    public var body: [UInt8]
    /// A body sent from a file with `sendfile(2)` after `body` (no copy through user space).
    public var file: HTTPFileRegion?

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], file: HTTPFileRegion? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.file = file
    }

    /// No response (status 0): what a connection holds between responses.
    static let none = HTTPResponse(status: 0)

    /// Body bytes in all: `body`, then `file`'s.
    public var contentLength: Int { body.count + (file?.count ?? 0) }
}

/// Bytes of an open file to send as (the end of) a response body. The region does not own the
/// descriptor: `owner` keeps it open until the response is written (or the connection closes).
/// Should the file turn out shorter than `count` while it is sent, the connection is closed,
/// so the client sees a short body, never a wrong one.
public struct HTTPFileRegion: Sendable {
    public let fd: Int32
    /// Where the bytes start in the file, bytes.
    public let offset: Int
    /// How many bytes, from `offset`.
    public let count: Int
    public let owner: any AnyObject & Sendable

    public init(fd: Int32, offset: Int, count: Int, owner: any AnyObject & Sendable) {
        self.fd = fd
        self.offset = offset
        self.count = count
        self.owner = owner
    }
}

/// The application side of the server. `respond` is called on the connection's event-loop
/// thread and must not block it: long work goes elsewhere and `completion` is called later, from any thread, exactly
/// once. Requests on one connection are handed over one at a time, in order (pipelined requests
/// wait until the previous response is written), so responses are always written in order.
public protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void)
}

/// What the server reports about each finished exchange, for statistics and the access log.
public struct HTTPExchangeRecord: Sendable {
    public var method: String
    public var target: String
    public var status: Int
    /// Body bytes sent (0 for HEAD and 304).
    public var bodyBytes: Int
    /// From the request's last byte read to the response's last byte handed to the kernel, ns.
    public var durationNanoseconds: UInt64
    /// Response headers as given by the responder (e.g. `X-Cache`), for the access log.
    public var responseHeaders: HTTPHeaders
    /// Which event loop served it (`HTTPRequest.loopIndex`): a recorder may keep per-loop
    /// counters that the loops' threads do not share.
    public var loopIndex = 0
    /// The address of the connection's peer (accept(2)): the client, or the proxy in front of
    /// it. nil when unknown (not IPv4 or IPv6, or outside a server).
    public var peer: IPAddress?
    /// The request line's version; nil for a request that did not parse (400, 408, 431...).
    public var version: HTTPVersion?
    /// The request's headers (`Referer`, `User-Agent`, `X-Forwarded-For` for the access log);
    /// none for a request that did not parse.
    public var requestHeaders = HTTPHeaders()

    public init(method: String, target: String, status: Int, bodyBytes: Int,
                durationNanoseconds: UInt64, responseHeaders: HTTPHeaders) {
        self.method = method
        self.target = target
        self.status = status
        self.bodyBytes = bodyBytes
        self.durationNanoseconds = durationNanoseconds
        self.responseHeaders = responseHeaders
    }
}
