#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental HTTP/1.1 request parser (RFC 9112): feed it whatever bytes arrived, in any
/// split (one byte at a time, or several pipelined requests at once), and take complete requests
/// out one at a time, in order. A pure value with no I/O, so it can be unit-tested and fuzzed.
///
/// Rules it applies, beyond the grammar:
/// - Bare LF is accepted as a line end (RFC 9112 §2.2); empty lines before a request line are
///   skipped (§2.2). A CR not followed by LF is an error.
/// - An absolute-form target (`http://host/path?q`) is converted to origin-form (`/path?q`);
///   the `Host` header is left as sent (RFC 9112 §3.2.2). `*` is accepted only for `OPTIONS`.
/// - Repeated `Content-Length` fields are rejected, even when identical; so are lists
///   (`5, 5`) and anything but digits (RFC 9112 §6.3 allows rejecting).
/// - `Transfer-Encoding` must be exactly `chunked` (once); other codings → 501.
/// - HTTP/1.1 and later minors need exactly one `Host` (RFC 9112 §3.2).
///
/// After an error every later call throws the same error: the connection must be closed.
public struct HTTPRequestParser: Sendable {
    /// Where the parser is in the current request.
    enum Phase: Sendable, Equatable {
        /// Waiting for the end of the head.
        case head
        /// Waiting for `bodyRemaining` bytes of a `Content-Length` body.
        case fixedBody
        /// Waiting for a chunk-size line.
        case chunkSize
        /// Inside chunk data; `bodyRemaining` bytes of this chunk to go.
        case chunkData
        /// Waiting for the CRLF after chunk data.
        case chunkDataEnd
        /// Inside the trailer section; `trailerBytes` so far.
        case trailer
    }

    /// The limits this parser enforces.
    public let limits: HTTPParserLimits

    /// Received bytes; those before `start` are consumed.
    var buffer: [UInt8] = []
    var start = 0
    var phase = Phase.head
    var failure: HTTPParseError?

    // Head scanning state (absolute indices into `buffer`).
    var scan = 0
    var lineStart = 0
    var requestLineEnd = -1
    var headLines = 0

    // Body state.
    var partial: HTTPRequest?
    var body: [UInt8] = []
    var bodyRemaining = 0
    var trailerBytes = 0
    /// The head just parsed asked for `100 Continue` before sending its body.
    var continueExpected = false

    /// Creates a parser with these limits (the defaults of `HTTPParserLimits` if omitted).
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Bytes received but not yet taken out as part of a request (an unfinished request,
    /// or pipelined requests waiting their turn), excluding body bytes already decoded.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Whether part of a request has arrived but not all of it.
    public var isMidRequest: Bool { phase != .head || buffer.count > start }

    /// Whether the parser is still waiting for the rest of a head (as opposed to a body).
    public var isInHead: Bool { phase == .head }

    /// Whether the request whose body is awaited sent `Expect: 100-continue` (RFC 9110
    /// §10.1.1) and has not been answered with `100 Continue` yet; clears the flag.
    public mutating func takeContinueExpectation() -> Bool {
        defer { continueExpected = false }
        return continueExpected && (phase == .fixedBody || phase == .chunkSize) && buffer.count == start
    }

    /// Appends received bytes. Cheap: consumed bytes are dropped lazily.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes from any collection (tests, fuzzing).
    public mutating func append<Bytes: Collection<UInt8>>(contentsOf bytes: Bytes) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request, or nil when more bytes are needed.
    /// - Throws: `HTTPParseError` for a malformed request or a limit exceeded; the parser stays
    ///   failed and throws it again on every later call.
    public mutating func nextRequest() throws(HTTPParseError) -> HTTPRequest? {
        if let failure { throw failure }
        do {
            return try parseNext()
        } catch {
            failure = error
            throw error
        }
    }

    /// Drops consumed bytes from the front of the buffer when that is cheap or worthwhile.
    mutating func compact() {
        if start == 0 { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if start >= 4096 && start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
        } else {
            return
        }
        scan -= start
        lineStart -= start
        if requestLineEnd >= 0 { requestLineEnd -= start }
        start = 0
    }

    mutating func parseNext() throws(HTTPParseError) -> HTTPRequest? {
        if phase == .head {
            guard let headEnd = try findHeadEnd() else { return nil }
            let framed = try buffer.withUnsafeBufferPointer { (p) throws(HTTPParseError) -> FramedHead in
                try Self.parseHead(p, start: start, requestLineEnd: requestLineEnd, headEnd: headEnd,
                                   lines: headLines, limits: limits)
            }
            start = headEnd
            resetHeadScan()
            switch framed.body {
            case .none:
                return framed.request
            case .length(let n):
                continueExpected = framed.expectsContinue
                partial = framed.request
                bodyRemaining = n
                phase = .fixedBody
            case .chunked:
                continueExpected = framed.expectsContinue
                partial = framed.request
                body = []
                phase = .chunkSize
            }
        }
        if phase == .fixedBody {
            guard buffer.count - start >= bodyRemaining else { return nil }
            body = Array(buffer[start..<(start + bodyRemaining)])
            start += bodyRemaining
            return finishRequest()
        }
        return try parseChunks() ? finishRequest() : nil
    }

    mutating func resetHeadScan() {
        scan = start
        lineStart = start
        requestLineEnd = -1
        headLines = 0
    }

    mutating func finishRequest() -> HTTPRequest? {
        guard var request = partial else { return nil }
        partial = nil
        request.body = body
        body = []
        bodyRemaining = 0
        trailerBytes = 0
        phase = .head
        continueExpected = false
        resetHeadScan()
        return request
    }

    /// Index of the first LF at or after `from`, or nil.
    func indexOfLF(from: Int) -> Int? {
        let count = buffer.count - from
        guard count > 0 else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let base = raw.baseAddress,
                  let hit = memchr(base + from, 0x0A, count) else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
    }

    /// Scans for the end of the head from where the last call stopped; returns the index just
    /// past the empty line that ends it, or nil when it has not arrived yet.
    mutating func findHeadEnd() throws(HTTPParseError) -> Int? {
        // Empty lines before a request line may arrive split (a lone CR, then its LF): look
        // again whenever the pending bytes still start with one (found by the fuzzer).
        if requestLineEnd < 0 && lineStart == start && start < buffer.count
            && (buffer[start] == 0x0D || buffer[start] == 0x0A) { skipEmptyLines() }
        while true {
            guard let lf = indexOfLF(from: scan) else {
                scan = buffer.count
                let pending = buffer.count - start
                if requestLineEnd < 0 && pending > limits.maxRequestLineBytes { throw .uriTooLong }
                if pending > limits.maxHeaderBytes + 2 { throw .headersTooLarge }
                return nil
            }
            let contentEnd = (lf > lineStart && buffer[lf - 1] == 0x0D) ? lf - 1 : lf
            if requestLineEnd < 0 {
                if contentEnd - lineStart > limits.maxRequestLineBytes { throw .uriTooLong }
                requestLineEnd = lf
            } else if contentEnd == lineStart {
                return lf + 1
            } else {
                headLines += 1
            }
            if lf + 1 - start > limits.maxHeaderBytes { throw .headersTooLarge }
            lineStart = lf + 1
            scan = lf + 1
        }
    }

    /// Skips CRLF or LF lines before a request line (RFC 9112 §2.2).
    mutating func skipEmptyLines() {
        while start < buffer.count {
            if buffer[start] == 0x0A {
                start += 1
            } else if buffer[start] == 0x0D, start + 1 < buffer.count, buffer[start + 1] == 0x0A {
                start += 2
            } else {
                break
            }
        }
        scan = start
        lineStart = start
    }
}
