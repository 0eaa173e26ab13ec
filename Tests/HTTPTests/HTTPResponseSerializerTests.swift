import Foundation
import Testing
@testable import HTTP

@Suite("Response serializer and Date")
struct HTTPResponseSerializerTests {
    let date = Array("Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n".utf8)

    func head(_ response: HTTPResponse, _ directive: HTTPResponseSerializer.ConnectionDirective = .none) -> String {
        var bytes: [UInt8] = []
        HTTPResponseSerializer.writeHead(into: &bytes, response: response, connection: directive, dateLine: date)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func statusLineHeadersLengthDate() {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "image/jpeg")
        headers.add("X-Cache", "HIT-MEMORY")
        let text = head(HTTPResponse(status: 200, headers: headers, body: [1, 2, 3]))
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nX-Cache: HIT-MEMORY\r\n"
            + "Content-Length: 3\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")
    }

    @Test func serverOwnedAndUnsafeHeadersAreDropped() {
        var headers = HTTPHeaders()
        headers.add("content-length", "999")
        headers.add("Date", "yesterday")
        headers.add("Connection", "keep-alive")
        headers.add("Transfer-Encoding", "chunked")
        headers.add("X-Split", "a\r\nSet-Cookie: evil")
        headers.add("Bad Name", "x")
        headers.add("X-Ok", "fine")
        let text = head(HTTPResponse(status: 404, headers: headers, body: Array("nope".utf8)), .close)
        #expect(text == "HTTP/1.1 404 Not Found\r\nX-Ok: fine\r\nContent-Length: 4\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nConnection: close\r\n\r\n")
    }

    @Test func preparedHeadersAreWrittenAsTheirFieldsAndDropTheSameOnes() {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "image/png")
        headers.add("Content-Length", "1")
        headers.add("X-Split", "a\r\nSet-Cookie: evil")
        headers.add("ETag", "\"abc\"")
        let prepared = headers.prepared()
        #expect(prepared.wire != nil)
        let expected = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nETag: \"abc\"\r\nContent-Length: 2\r\n"
            + "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"
        #expect(head(HTTPResponse(status: 200, headers: prepared, body: [1, 2])) == expected)
        #expect(head(HTTPResponse(status: 200, headers: headers, body: [1, 2])) == expected)
        // A changed copy is written from its fields, never from the stale bytes.
        var changed = prepared
        changed.set("ETag", "\"new\"")
        #expect(changed.wire == nil)
        #expect(head(HTTPResponse(status: 200, headers: changed, body: [])).contains("ETag: \"new\"\r\n"))
        #expect(!head(HTTPResponse(status: 200, headers: changed, body: [])).contains("abc"))
        // Reading does not drop it.
        #expect(prepared["ETag"] == "\"abc\"" && prepared.wire != nil)
    }

    @Test func noContentLengthFor204And304() {
        #expect(!head(HTTPResponse(status: 304)).contains("Content-Length"))
        #expect(!head(HTTPResponse(status: 204)).contains("Content-Length"))
        #expect(head(HTTPResponse(status: 200)).contains("Content-Length: 0\r\n"))
    }

    @Test func keepAliveDirectiveAndOddStatus() {
        #expect(head(HTTPResponse(status: 200), .keepAlive).contains("Connection: keep-alive\r\n"))
        #expect(head(HTTPResponse(status: 299)).hasPrefix("HTTP/1.1 299 \r\n"))
        #expect(head(HTTPResponse(status: 42)).hasPrefix("HTTP/1.1 500 Internal Server Error\r\n"))
    }

    @Test func decimalDigits() {
        for n in [0, 7, 10, 27_648, 8_388_608, Int.max] {
            var out: [UInt8] = []
            HTTPResponseSerializer.appendDecimal(&out, n)
            #expect(String(decoding: out, as: UTF8.self) == String(n))
        }
    }

    @Test func imfFixdate() {
        // RFC 9110 §5.6.7's example: Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
        #expect(String(decoding: HTTPDateCache.headerLine(for: 784_111_777), as: UTF8.self)
            == "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
        #expect(String(decoding: HTTPDateCache.headerLine(for: 0), as: UTF8.self)
            == "Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n")
        var cache = HTTPDateCache()
        #expect(cache.currentLine().count == 37)
    }

    @Test func errorBodyIsJSON() throws {
        let r = HTTPErrorResponse.make(status: 400, code: "bad_request", message: "Say \"hi\"\n")
        #expect(try JSONDecoder().decode(HTTPErrorBody.self, from: Data(r.body))
            == HTTPErrorBody(error: "bad_request", message: "Say \"hi\"\n"))
        // Written by JSONEncoder: keys sorted, no spaces.
        #expect(String(decoding: r.body, as: UTF8.self)
            == #"{"error":"bad_request","message":"Say \"hi\"\n"}"#)
        #expect(r.headers["Cache-Control"] == "no-store")
        #expect(r.headers["Content-Type"] == "application/json")
    }
}
