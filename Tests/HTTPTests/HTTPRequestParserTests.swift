import Testing
@testable import HTTP

@Suite("Request parser: valid input")
struct HTTPRequestParserTests {
    @Test func simpleGet() throws {
        let requests = try parseAll("GET /thumbnails/3/a.jpg?x=1 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
        #expect(requests.count == 1)
        let r = try #require(requests.first)
        #expect(r.method == "GET")
        #expect(r.target == "/thumbnails/3/a.jpg?x=1")
        #expect(r.path == "/thumbnails/3/a.jpg")
        #expect(r.query == "x=1")
        #expect(r.version == .http1_1)
        #expect(r.headers["Host"] == "example.com")
        #expect(r.headers.fields.count == 2)
        #expect(r.body.isEmpty)
    }

    @Test func headerNamesAreCaseInsensitiveAndValuesTrimmed() throws {
        let r = try #require(try parseAll("GET / HTTP/1.1\r\nhOsT: h\r\nX-Thing: \t value with  spaces \t\r\n\r\n").first)
        #expect(r.headers["HOST"] == "h")
        #expect(r.headers["x-thing"] == "value with  spaces")
        #expect(r.headers.fields[1].name == "X-Thing")
    }

    /// Parsed headers stay bytes until read; every way of reading them agrees with headers
    /// given as strings, and changing them keeps the rest.
    @Test func receivedHeadersReadLikeGivenOnes() throws {
        let text = "GET / HTTP/1.1\r\nHost: h\r\nAccept: image/webp\r\nX-Cafe: caf\u{E9}\r\n"
            + "accept: */*\r\nX-Empty:\r\n\r\n"
        let received = try #require(try parseAll(text).first).headers
        let given = HTTPHeaders([("Host", "h"), ("Accept", "image/webp"), ("X-Cafe", "caf\u{E9}"),
                                 ("accept", "*/*"), ("X-Empty", "")])
        for headers in [received, given] {
            #expect(headers["ACCEPT"] == "image/webp")
            #expect(headers.values("Accept") == ["image/webp", "*/*"])
            #expect(headers.contains("x-empty") && headers["X-Empty"] == "")
            #expect(!headers.contains("Accep") && headers["Acceptt"] == nil && headers.values("nope").isEmpty)
            #expect(headers.fields.map(\.name) == ["Host", "Accept", "X-Cafe", "accept", "X-Empty"])
            #expect(headers.fields[2].value == "caf\u{E9}")
            #expect(headers.containsValue(named: "Accept") { $0.count == 3 })
            #expect(!headers.containsValue(named: "Host") { $0.count == 3 })
            var changed = headers
            changed.set("accept", "image/png")
            changed.add("X-New", "1")
            #expect(changed.fields.map(\.name) == ["Host", "X-Cafe", "X-Empty", "accept", "X-New"])
            #expect(changed.values("Accept") == ["image/png"])
            #expect(headers.values("Accept") == ["image/webp", "*/*"])   // the original is untouched
        }
        // A value byte that is not UTF-8 reads as U+FFFD, as before.
        let raw: [UInt8] = Array("GET / HTTP/1.1\r\nHost: h\r\nX-Bin: a".utf8) + [0xFF] + Array("b\r\n\r\n".utf8)
        var parser = HTTPRequestParser()
        parser.append(contentsOf: raw)
        #expect(try parser.nextRequest()?.headers["X-Bin"] == "a\u{FFFD}b")
    }

    @Test func oneByteAtATime() throws {
        let text = "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
            + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n"
        let requests = try parseByteByByte(text)
        #expect(requests.map(\.target) == ["/echo", "/next"])
        #expect(requests[0].body == Array("hello".utf8))
    }

    @Test func emptyLinesBeforeARequestMaySplitBetweenCRAndLF() throws {
        // RFC 9112 §2.2: a server should ignore empty lines before a request line. Found by the
        // fuzzer: a lone CR at the end of one read used to become an empty request line (400).
        let text = "\r\n\nGET /after HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(try parseByteByByte(text).map(\.target) == ["/after"])
        #expect(try parseAll(text).map(\.target) == ["/after"])
    }

    @Test func twoPipelinedRequests() throws {
        let requests = try parseAll("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(requests.map(\.target) == ["/a", "/b"])
    }

    @Test func threePipelinedRequestsWithBodies() throws {
        let requests = try parseAll(
            "PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
            + "HEAD /b HTTP/1.1\r\nHost: h\r\n\r\n"
            + "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n")
        #expect(requests.map(\.method) == ["PUT", "HEAD", "POST"])
        #expect(requests.map(\.target) == ["/a", "/b", "/c"])
        #expect(requests[0].body == Array("abc".utf8))
        #expect(requests[2].body == Array("xy".utf8))
    }

    @Test func bareLFLineEnds() throws {
        let requests = try parseAll("GET /lf HTTP/1.1\nHost: h\nX: 1\n\nGET /2 HTTP/1.1\nHost: h\n\n")
        #expect(requests.map(\.target) == ["/lf", "/2"])
        #expect(requests[0].headers["x"] == "1")
    }

    @Test func emptyLinesBeforeRequestAreSkipped() throws {
        let requests = try parseAll("\r\n\nGET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(requests.count == 1)
    }

    @Test func contentLengthBody() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Array("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n01234".utf8))
        #expect(try parser.nextRequest() == nil)
        #expect(parser.isMidRequest)
        #expect(!parser.isInHead)
        parser.append(contentsOf: Array("56789".utf8))
        let r = try #require(try parser.nextRequest())
        #expect(r.body == Array("0123456789".utf8))
        #expect(!parser.isMidRequest)
    }

    @Test func chunkedBodyWithExtensionAndTrailer() throws {
        let text = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n"
            + "1A ; x\r\n" + String(repeating: "z", count: 26) + "\r\n"
            + "0\r\nX-Trailer: yes\r\nOther: 1\r\n\r\n"
            + "GET /after HTTP/1.1\r\nHost: h\r\n\r\n"
        for requests in [try parseAll(text), try parseByteByByte(text)] {
            #expect(requests.count == 2)
            #expect(requests[0].body == Array(("hello" + String(repeating: "z", count: 26)).utf8))
            #expect(requests[0].headers["X-Trailer"] == nil)
            #expect(requests[1].target == "/after")
        }
    }

    @Test func http10WithoutHost() throws {
        let r = try #require(try parseAll("GET / HTTP/1.0\r\n\r\n").first)
        #expect(r.version == .http1_0)
    }

    @Test func absoluteFormBecomesOriginForm() throws {
        let requests = try parseAll("GET http://example.com/a/b?c HTTP/1.1\r\nHost: example.com\r\n\r\n"
            + "GET HTTP://example.com HTTP/1.1\r\nHost: example.com\r\n\r\n")
        #expect(requests.map(\.target) == ["/a/b?c", "/"])
    }

    @Test func asteriskForOptions() throws {
        #expect(try parseAll("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").first?.target == "*")
        #expect(parseError("GET * HTTP/1.1\r\nHost: h\r\n\r\n")?.status == 400)
    }

    @Test func rawUTF8TargetIsAccepted() throws {
        #expect(try parseAll("GET /사진.jpg HTTP/1.1\r\nHost: h\r\n\r\n").first?.target == "/사진.jpg")
    }

    @Test func bodyAtExactLimitIsAccepted() throws {
        let limits = HTTPParserLimits(maxRequestLineBytes: 100, maxHeaderBytes: 200, maxBodyBytes: 4)
        #expect(try parseAll("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd", limits: limits).count == 1)
        #expect(try parseAll("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n",
                             limits: limits).count == 1)
    }

    @Test func incompleteInputWaits() throws {
        #expect(try parseAll("GET / HTTP/1.1\r\nHost: h\r\n").isEmpty)
        #expect(try parseAll("GET / HTT").isEmpty)
        #expect(try parseAll("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel").isEmpty)
    }

    @Test func expectContinueIsReportedOnce() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Array("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(try parser.nextRequest() == nil)
        let first = parser.takeContinueExpectation(), second = parser.takeContinueExpectation()
        #expect(first)
        #expect(!second)
        parser.append(contentsOf: Array("ok".utf8))
        #expect(try parser.nextRequest()?.body == Array("ok".utf8))
    }

    @Test func errorIsSticky() {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Array("BAD LINE\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.nextRequest() }
        parser.append(contentsOf: Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(throws: HTTPParseError.self) { try parser.nextRequest() }
    }
}
