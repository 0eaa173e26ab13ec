#if canImport(Glibc)
import Glibc
#endif
import Testing
import HTTP

@Suite("Server: exchanges over 127.0.0.1")
struct HTTPServerExchangeTests {
    @Test func keepAliveServesThreeRequestsOnOneConnection() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        for i in 1...3 {
            try c.send(get("/k\(i)"))
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.text == "hello /k\(i)")
            #expect(r.header("Connection") == nil)
            #expect(r.header("Date")?.hasSuffix(" GMT") == true)
            #expect(r.header("X-Test") == "yes")
        }
        #expect(s.server.connectionCounts.total == 1)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        // The first is answered 200 ms late from another queue; the others complete at once.
        try c.send(get("/slow?ms=200") + get("/a") + get("/b"))
        #expect(try c.readResponse().text == "hello /slow?ms=200")
        #expect(try c.readResponse().text == "hello /a")
        #expect(try c.readResponse().text == "hello /b")
    }

    @Test func http10ClosesAfterTheResponse() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("GET /old HTTP/1.0\r\n\r\n")
        let r = try c.readResponse()
        #expect(r.status == 200)
        #expect(r.header("Connection") == "close")
        #expect(try c.isClosedByServer())
    }

    @Test func http10KeepAliveIsHonoured() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        for _ in 0..<2 {
            try c.send("GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.header("Connection") == "keep-alive")
        }
    }

    @Test func connectionCloseCloses() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send(get("/bye", "Connection: close\r\n"))
        let r = try c.readResponse()
        #expect(r.status == 200)
        #expect(r.header("Connection") == "close")
        #expect(try c.isClosedByServer())
    }

    @Test func headHasContentLengthAndNoBody() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("HEAD /big HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try c.readResponse(bodyless: true)
        #expect(r.header("Content-Length") == String(TestResponder.big.count))
        // The next response starts right away: no body bytes were sent.
        try c.send(get("/after"))
        #expect(try c.readResponse().text == "hello /after")
        let records = s.log.wait(for: 2)
        #expect(records.first?.bodyBytes == 0)
        #expect(records.first?.method == "HEAD")
    }

    @Test func notModifiedHasNoContentLengthAndNoBody() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send(get("/not-modified") + get("/after"))
        let r = try c.readResponse(bodyless: true)
        #expect(r.status == 304)
        #expect(r.header("Content-Length") == nil)
        #expect(r.header("ETag") == "\"abc\"")
        #expect(try c.readResponse().text == "hello /after")
    }

    @Test func requestSentOneByteAtATime() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        for byte in "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello".utf8 {
            try c.send([byte])
            usleep(500)
        }
        let r = try c.readResponse()
        #expect(r.text == "hello")
    }

    @Test func chunkedRequestBodyIsDecoded() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n")
        #expect(try c.readResponse().text == "abcde")
    }

    @Test func expectContinueGetsInterimResponse() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        #expect(try c.readResponse(bodyless: true).status == 100)
        try c.send("body")
        #expect(try c.readResponse().text == "body")
    }

    @Test func onExchangeReportsStatusAndBytes() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send(get("/report?x=1"))
        let r = try c.readResponse()
        let records = s.log.wait(for: 1)
        let record = try #require(records.first)
        #expect(record.method == "GET")
        #expect(record.target == "/report?x=1")
        #expect(record.status == 200)
        #expect(record.bodyBytes == r.body.count)
        #expect(record.responseHeaders["X-Test"] == "yes")
        #expect(record.durationNanoseconds < 1_000_000_000)
    }

    /// The record names the connection's peer as accept(2) gave it (the test client is on
    /// 127.0.0.1), the request's version and its headers, for the access log.
    @Test func onExchangeNamesThePeerTheVersionAndTheRequestHeaders() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("GET /who HTTP/1.0\r\nHost: t\r\nUser-Agent: probe/1.0\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n")
        _ = try c.readResponse()
        let record = try #require(s.log.wait(for: 1).first)
        #expect(record.peer?.description == "127.0.0.1")
        #expect(record.peer?.bytes == [127, 0, 0, 1])
        #expect(record.version == .http1_0)
        #expect(record.requestHeaders["User-Agent"] == "probe/1.0")
        #expect(record.requestHeaders["X-Forwarded-For"] == "203.0.113.7")
    }
}
