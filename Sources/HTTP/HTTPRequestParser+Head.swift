/// Parsing a complete head (request line and header section) found by `findHeadEnd`.
extension HTTPRequestParser {
    /// How the body of a request is framed (RFC 9112 §6.3).
    enum BodyFraming: Sendable, Equatable {
        case none
        case length(Int)
        case chunked
    }

    /// A parsed head and how its body is framed.
    struct FramedHead: Sendable {
        var request: HTTPRequest
        var body: BodyFraming
        /// `Expect: 100-continue` on an HTTP/1.1 request (RFC 9110 §10.1.1).
        var expectsContinue = false
    }

    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let sp: UInt8 = 0x20
    static let htab: UInt8 = 0x09

    /// Parses the head in `p[start..<headEnd]`; `requestLineEnd` is the index of the request
    /// line's LF and `lines` the number of header lines.
    static func parseHead(_ p: UnsafeBufferPointer<UInt8>, start: Int, requestLineEnd: Int,
                          headEnd: Int, lines: Int,
                          limits: HTTPParserLimits) throws(HTTPParseError) -> FramedHead {
        var lineEnd = requestLineEnd
        if lineEnd > start && p[lineEnd - 1] == cr { lineEnd -= 1 }
        let (method, target, version) = try parseRequestLine(p, start, lineEnd)

        // The header section is kept as bytes, with where each name and value lie.
        let sectionStart = requestLineEnd + 1
        var fields = HTTPReceivedFields.Builder(section: UnsafeBufferPointer(rebasing: p[sectionStart..<headEnd]),
                                                fieldCount: lines)
        var contentLength: Int? = nil
        var chunked = false
        var sawTransferEncoding = false
        var hostCount = 0
        var expectsContinue = false

        var lineStart = requestLineEnd + 1
        for _ in 0..<lines {
            var end = lineStart
            while p[end] != lf { end += 1 }
            let next = end + 1
            if end > lineStart && p[end - 1] == cr { end -= 1 }
            let (nameEnd, valueStart, valueEnd) = try splitField(p, lineStart, end)
            let valueBytes = UnsafeBufferPointer(rebasing: p[valueStart..<valueEnd])
            switch nameEnd - lineStart {
            case 4 where equalsLowercase(p, lineStart, "host"):
                hostCount += 1
            case 14 where equalsLowercase(p, lineStart, "content-length"):
                if contentLength != nil { throw .badRequest("Repeated Content-Length header.") }
                contentLength = try parseContentLength(valueBytes)
            case 6 where equalsLowercase(p, lineStart, "expect"):
                expectsContinue = valueBytes.count == 12 && equalsLowercase(valueBytes, 0, "100-continue")
            case 17 where equalsLowercase(p, lineStart, "transfer-encoding"):
                sawTransferEncoding = true
                chunked = try parseTransferEncoding(valueBytes, alreadyChunked: chunked)
            default:
                break
            }
            fields.append(HTTPReceivedFields.Span(nameStart: Int32(lineStart - sectionStart), nameEnd: Int32(nameEnd - sectionStart),
                                                 valueStart: Int32(valueStart - sectionStart),
                                                 valueEnd: Int32(valueEnd - sectionStart)))
            lineStart = next
        }
        let headers = fields.isEmpty ? HTTPHeaders() : HTTPHeaders(received: fields.finish())

        if version.minor >= 1 && hostCount == 0 {
            throw .badRequest("An HTTP/1.1 request needs a Host header.")
        }
        if hostCount > 1 { throw .badRequest("Repeated Host header.") }
        if sawTransferEncoding && contentLength != nil {
            throw .badRequest("Both Content-Length and Transfer-Encoding are present.")
        }
        if sawTransferEncoding && !chunked {
            throw .badRequest("Empty Transfer-Encoding header.")
        }
        var framing = BodyFraming.none
        if chunked {
            framing = .chunked
        } else if let n = contentLength, n > 0 {
            if n > limits.maxBodyBytes { throw .payloadTooLarge }
            framing = .length(n)
        }
        return FramedHead(request: HTTPRequest(method: method, target: target, version: version,
                                               headers: headers, body: []),
                          body: framing, expectsContinue: expectsContinue && version.minor >= 1)
    }

    /// Splits `METHOD SP request-target SP HTTP/x.y` (RFC 9112 §3).
    static func parseRequestLine(_ p: UnsafeBufferPointer<UInt8>, _ start: Int,
                                 _ end: Int) throws(HTTPParseError) -> (String, String, HTTPVersion) {
        var i = start
        while i < end && HTTPByteClass.isToken(p[i]) { i += 1 }
        guard i > start, i < end, p[i] == sp else {
            throw .badRequest(i < end && p[i] != sp ? "The method is not a token." : "Malformed request line.")
        }
        let method = methodString(p, start, i)
        i += 1
        let targetStart = i
        while i < end && HTTPByteClass.isTarget(p[i]) { i += 1 }
        guard i > targetStart, i < end, p[i] == sp else {
            throw .badRequest("Malformed request line.")
        }
        let targetEnd = i
        i += 1
        let version = try parseVersion(p, i, end)
        let target = try parseTarget(p, targetStart, targetEnd, method: method)
        return (method, target, version)
    }

    /// `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3); a major version other than 1 → 505.
    static func parseVersion(_ p: UnsafeBufferPointer<UInt8>, _ start: Int,
                             _ end: Int) throws(HTTPParseError) -> HTTPVersion {
        guard end - start == 8,
              p[start] == UInt8(ascii: "H"), p[start + 1] == UInt8(ascii: "T"),
              p[start + 2] == UInt8(ascii: "T"), p[start + 3] == UInt8(ascii: "P"),
              p[start + 4] == UInt8(ascii: "/"), isDigit(p[start + 5]),
              p[start + 6] == UInt8(ascii: "."), isDigit(p[start + 7]) else {
            throw .badRequest("Malformed HTTP version.")
        }
        let major = Int(p[start + 5] - 48), minor = Int(p[start + 7] - 48)
        guard major == 1 else { throw .versionNotSupported }
        return HTTPVersion(major: major, minor: minor)
    }

    /// The request-target as a String: origin-form as sent, `*` for OPTIONS, absolute-form
    /// reduced to origin-form (RFC 9112 §3.2). Bytes ≥ 0x80 must be valid UTF-8.
    static func parseTarget(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int,
                            method: String) throws(HTTPParseError) -> String {
        var from = start
        switch p[start] {
        case UInt8(ascii: "/"):
            break
        case UInt8(ascii: "*") where end - start == 1 && method == "OPTIONS":
            return "*"
        default:
            guard let pathStart = absoluteFormPathStart(p, start, end) else {
                throw .badRequest("The request target must start with '/'.")
            }
            from = pathStart
            if from == end { return "/" }
            if p[from] == UInt8(ascii: "?") {
                guard let rest = String(validating: UnsafeBufferPointer(rebasing: p[from..<end]), as: UTF8.self)
                else { throw .badRequest("The request target is not valid UTF-8.") }
                return "/" + rest
            }
        }
        let bytes = UnsafeBufferPointer(rebasing: p[from..<end])
        // Nearly every target is ASCII, which needs no validation; the generic validating
        // initializer costs more than the rest of the request line.
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        guard let target = String(validating: bytes, as: UTF8.self) else {
            throw .badRequest("The request target is not valid UTF-8.")
        }
        return target
    }

    /// Whether every byte is below 0x80.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var any: UInt8 = 0
        for b in bytes { any |= b }
        return any < 0x80
    }

    /// For `http://authority/path` or `https://…` (any case), the index where the path (or
    /// query) starts, `end` when there is none; nil when the target is not absolute-form.
    static func absoluteFormPathStart(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
        var i = start
        for c in "http".utf8 {
            guard i < end, HTTPByteClass.lowercase(p[i]) == c else { return nil }
            i += 1
        }
        if i < end && HTTPByteClass.lowercase(p[i]) == UInt8(ascii: "s") { i += 1 }
        for c in "://".utf8 {
            guard i < end, p[i] == c else { return nil }
            i += 1
        }
        let authorityStart = i
        while i < end && p[i] != UInt8(ascii: "/") && p[i] != UInt8(ascii: "?") { i += 1 }
        return i > authorityStart ? i : nil
    }

    /// Splits `name ":" OWS value OWS` (RFC 9112 §5), validating both parts; returns the end of
    /// the name and the value's bounds.
    static func splitField(_ p: UnsafeBufferPointer<UInt8>, _ start: Int,
                           _ end: Int) throws(HTTPParseError) -> (Int, Int, Int) {
        if p[start] == sp || p[start] == htab {
            throw .badRequest("Obsolete line folding is not accepted.")
        }
        var i = start
        while i < end && HTTPByteClass.isToken(p[i]) { i += 1 }
        guard i < end, p[i] == UInt8(ascii: ":") else {
            if i < end && (p[i] == sp || p[i] == htab) {
                throw .badRequest("Whitespace between a header name and its colon.")
            }
            throw .badRequest("Invalid header name.")
        }
        guard i > start else { throw .badRequest("Empty header name.") }
        let nameEnd = i
        i += 1
        while i < end && (p[i] == sp || p[i] == htab) { i += 1 }
        var valueEnd = end
        while valueEnd > i && (p[valueEnd - 1] == sp || p[valueEnd - 1] == htab) { valueEnd -= 1 }
        for j in i..<valueEnd where !HTTPByteClass.isFieldValue(p[j]) {
            throw .badRequest("Invalid byte in a header value.")
        }
        return (nameEnd, i, valueEnd)
    }

    /// `1*DIGIT` (RFC 9110 §8.6); lists and signs are rejected. Values too large for an Int
    /// come back as `Int.max` (then 413).
    static func parseContentLength(_ v: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> Int {
        guard !v.isEmpty else { throw .badRequest("Invalid Content-Length header.") }
        var n = 0
        for b in v {
            guard isDigit(b) else { throw .badRequest("Invalid Content-Length header.") }
            if n > (Int.max - 9) / 10 { n = Int.max } else { n = n * 10 + Int(b - 48) }
        }
        return n
    }

    /// Accepts only `chunked`, once, across all Transfer-Encoding fields (RFC 9112 §6.1);
    /// another coding → 501. Returns whether `chunked` has been seen.
    static func parseTransferEncoding(_ v: UnsafeBufferPointer<UInt8>,
                                      alreadyChunked: Bool) throws(HTTPParseError) -> Bool {
        var chunked = alreadyChunked
        var i = 0
        while i < v.count {
            while i < v.count && (v[i] == sp || v[i] == htab || v[i] == UInt8(ascii: ",")) { i += 1 }
            let s = i
            while i < v.count && v[i] != UInt8(ascii: ",") { i += 1 }
            var e = i
            while e > s && (v[e - 1] == sp || v[e - 1] == htab) { e -= 1 }
            guard e > s else { continue }
            guard e - s == 7, equalsLowercase(v, s, "chunked") else {
                throw .notImplemented("Only the chunked transfer coding is supported.")
            }
            if chunked { throw .badRequest("chunked is applied more than once.") }
            chunked = true
        }
        return chunked
    }

    /// Whether the bytes at `p[at...]` equal the lowercase ASCII `word`, ignoring case.
    @inline(__always)
    static func equalsLowercase(_ p: UnsafeBufferPointer<UInt8>, _ at: Int, _ word: StaticString) -> Bool {
        let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard at + w.count <= p.count else { return false }
        for k in 0..<w.count where HTTPByteClass.lowercase(p[at + k]) != w[k] { return false }
        return true
    }

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }

    /// The method as a String, without decoding for the common ones.
    static func methodString(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
        switch end - start {
        case 3 where p[start] == UInt8(ascii: "G") && p[start + 1] == UInt8(ascii: "E") && p[start + 2] == UInt8(ascii: "T"):
            return "GET"
        case 4 where p[start] == UInt8(ascii: "H") && p[start + 1] == UInt8(ascii: "E")
            && p[start + 2] == UInt8(ascii: "A") && p[start + 3] == UInt8(ascii: "D"):
            return "HEAD"
        default:
            return String(decoding: UnsafeBufferPointer(rebasing: p[start..<end]), as: UTF8.self)
        }
    }
}
