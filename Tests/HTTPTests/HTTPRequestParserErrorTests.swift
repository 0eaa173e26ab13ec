import Testing
@testable import HTTP

@Suite("Request parser: rejected input")
struct HTTPRequestParserErrorTests {
    static let badRequests: [(String, String)] = [
        ("malformed request line", "GET /\r\nHost: h\r\n\r\n"),
        ("two spaces", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("lowercase version", "GET / http/1.1\r\nHost: h\r\n\r\n"),
        ("method not a token", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("target without slash", "GET index.html HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("control byte in target", "GET /a\u{01}b HTTP/1.1\r\nHost: h\r\n\r\n"),
        ("header name not a token", "GET / HTTP/1.1\r\nHost: h\r\nBad(Name: x\r\n\r\n"),
        ("space before colon", "GET / HTTP/1.1\r\nHost: h\r\nX-A : x\r\n\r\n"),
        ("no colon", "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n"),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\r\n  folded\r\n\r\n"),
        ("control byte in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{07}b\r\n\r\n"),
        ("bare CR in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n"),
        ("NUL in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{00}b\r\n\r\n"),
        ("CL and TE", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ("repeated CL", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
        ("conflicting CL", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
        ("CL list", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\nabc"),
        ("non-numeric CL", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n"),
        ("negative CL", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n"),
        ("chunked twice", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"),
        ("HTTP/1.1 without Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
        ("bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("chunk longer than size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n"),
    ]

    @Test(arguments: badRequests)
    func badRequestIs400(_ name: String, _ text: String) {
        let error = parseError(text)
        #expect(error?.status == 400, "\(name)")
        #expect(error?.code == "bad_request", "\(name)")
    }

    @Test func unknownTransferCodingIs501() {
        let error = parseError("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
        #expect(error?.status == 501)
        #expect(error?.code == "not_implemented")
    }

    @Test func longRequestLineIs414() {
        let limits = HTTPParserLimits(maxRequestLineBytes: 64, maxHeaderBytes: 8192, maxBodyBytes: 1024)
        let target = "/" + String(repeating: "a", count: 100)
        #expect(parseError("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n", limits: limits) == .uriTooLong)
        // Also before the line end has arrived.
        #expect(parseError("GET \(target)", limits: limits) == .uriTooLong)
        // Exactly at the limit is fine.
        let exact = "GET /" + String(repeating: "a", count: 64 - 14) + " HTTP/1.1"
        #expect(exact.utf8.count == 64)
        #expect(parseError(exact + "\r\nHost: h\r\n\r\n", limits: limits) == nil)
    }

    @Test func largeHeadIs431() {
        let limits = HTTPParserLimits(maxRequestLineBytes: 8192, maxHeaderBytes: 256, maxBodyBytes: 1024)
        let big = "X-Big: " + String(repeating: "b", count: 300)
        #expect(parseError("GET / HTTP/1.1\r\nHost: h\r\n\(big)\r\n\r\n", limits: limits) == .headersTooLarge)
        #expect(parseError("GET / HTTP/1.1\r\nHost: h\r\n\(big)", limits: limits) == .headersTooLarge)
        let many = String(repeating: "X-A: 1\r\n", count: 40)
        #expect(parseError("GET / HTTP/1.1\r\nHost: h\r\n\(many)\r\n", limits: limits) == .headersTooLarge)
        let trailer = String(repeating: "T: 1234567890\r\n", count: 30)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(trailer)\r\n",
                           limits: limits) == .headersTooLarge)
    }

    @Test func largeBodyIs413() {
        let limits = HTTPParserLimits(maxRequestLineBytes: 8192, maxHeaderBytes: 8192, maxBodyBytes: 10)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits) == .payloadTooLarge)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n",
                           limits: limits) == .payloadTooLarge)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\n",
                           limits: limits) == .payloadTooLarge)
        #expect(parseError("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
                           limits: limits) == .payloadTooLarge)
    }

    @Test(arguments: ["HTTP/2.0", "HTTP/3.0", "HTTP/0.9"])
    func unsupportedVersionIs505(_ version: String) {
        #expect(parseError("GET / \(version)\r\nHost: h\r\n\r\n") == .versionNotSupported)
    }

    @Test func errorCodes() {
        #expect(HTTPParseError.requestTimeout.status == 408)
        #expect(HTTPParseError.requestTimeout.code == "request_timeout")
        #expect(HTTPParseError.uriTooLong.code == "uri_too_long")
        #expect(HTTPParseError.headersTooLarge.code == "headers_too_large")
        #expect(HTTPParseError.payloadTooLarge.code == "payload_too_large")
        #expect(HTTPParseError.versionNotSupported.code == "version_not_supported")
    }
}
