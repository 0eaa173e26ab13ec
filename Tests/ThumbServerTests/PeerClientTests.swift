@testable import Cluster
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `PeerClient` against loopback listeners made here (`CannedPeer`) that answer canned bytes:
/// what arrives at the peer, framing by Content-Length and to EOF, responses in pieces, the one
/// deadline over the exchange, refused ports, the 4 MiB cap, malformed responses.
@Suite struct PeerClientTests {
    /// The failure `call` threw; nil when it returned.
    static func failure(_ call: () throws(PeerClient.Failure) -> PeerResponse) -> PeerClient.Failure? {
        do { _ = try call(); return nil } catch { return error }
    }

    static func milliseconds(since start: UInt64) -> Int { Int((PeerClient.monotonicNanoseconds() - start) / 1_000_000) }

    static let json = Array(#"{"job":"p-7","accepted":12}"#.utf8)   // 27 bytes

    @Test func a202WithAJSONBodyAndContentLength() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 27\r\nX-Node:  a \r\n\r\n".utf8)
                                          + Self.json + Array("trailing bytes past the length".utf8)]))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/prefetch/p-7")
        #expect(response.status == 202)
        #expect(response.reason == "Accepted")
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("X-NODE") == "a")   // surrounding whitespace is not the value
        #expect(response.body == Self.json)
        #expect(response.headers.map(\.name) == ["Content-Type", "Content-Length", "X-Node"])
    }

    @Test func aResponseSplitOverSeveralWrites() throws {
        let whole = Array("HTTP/1.1 200 OK\r\nContent-Length: 27\r\nContent-Type: application/json\r\n\r\n".utf8) + Self.json
        // Cut inside the status line, inside a field, between CR and LF of the empty line, and in the body.
        let cuts = [5, 24, 70, 80, whole.count]
        var pieces: [[UInt8]] = [], start = 0
        for cut in cuts { pieces.append(Array(whole[start..<cut])); start = cut }
        #expect(pieces.map(\.count).reduce(0, +) == whole.count && whole[69] == 13 && whole[70] == 10)
        let peer = try CannedPeer(.reply(pieces, pauseMilliseconds: 30))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.body == Self.json)
    }

    @Test func withoutContentLengthTheBodyEndsAtTheEndOfTheConnection() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.0 200 OK\r\n\r\nfirst ".utf8), Array("second".utf8)], pauseMilliseconds: 30))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.status == 200)
        #expect(response.body == Array("first second".utf8))
    }

    @Test func aPOSTBodyArrivesByteExactWithHostAndContentLength() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)]))
        defer { peer.stop() }
        let body = (0...255).map { UInt8($0) }   // every byte value, CR, LF and NUL among them
        let response = try PeerClient().send(method: "POST", server: "127.0.0.1:\(peer.port)", path: "/prefetch?forwarded=1",
                                             headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "9"),
                                                       ("X-Bad", "a\r\nInjected: 1")],
                                             body: body)
        #expect(response.status == 204 && response.body.isEmpty)
        let expected = Array("""
            POST /prefetch?forwarded=1 HTTP/1.1\r
            Host: 127.0.0.1:\(peer.port)\r
            Content-Type: application/octet-stream\r
            Content-Length: 256\r
            Connection: close\r
            \r

            """.utf8) + body
        #expect(peer.requests == [expected])
    }

    @Test func anEmptyPOSTSendsContentLengthZeroAndAGETNone() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)]))
        defer { peer.stop() }
        _ = try PeerClient().send(method: "POST", server: "127.0.0.1:\(peer.port)", path: "/a")
        _ = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/b")
        let requests = peer.requests.map { String(decoding: $0, as: UTF8.self) }.sorted()
        #expect(requests == ["GET /b HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\nConnection: close\r\n\r\n",
                             "POST /a HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"])
    }

    @Test func aPeerThatNeverAnswersTimesOutAtTheDeadline() throws {
        let peer = try CannedPeer(.silent)
        defer { peer.stop() }
        let server = "127.0.0.1:\(peer.port)"
        let start = PeerClient.monotonicNanoseconds()
        let failure = Self.failure { () throws(PeerClient.Failure) in
            try PeerClient(timeoutMilliseconds: 300).send(method: "POST", server: server, path: "/prefetch", body: Array("{}".utf8))
        }
        let elapsed = Self.milliseconds(since: start)
        #expect(failure == .timeout(server: server, milliseconds: 300))
        #expect(elapsed >= 300 && elapsed < 500, "\(elapsed) ms")
        #expect(failure?.description == "peer \(server): no complete response within 300 ms")
        #expect(peer.requests.count == 1)   // it was connected and the request written
    }

    @Test func theDeadlineCoversTheWholeExchangeNotEachRead() throws {
        // Eight pieces 100 ms apart: every read waits < 300 ms, the whole takes ~700 ms.
        let pieces = [Array("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n".utf8)] + (0..<7).map { _ in [UInt8(ascii: "x")] }
        let peer = try CannedPeer(.reply(pieces, pauseMilliseconds: 100))
        defer { peer.stop() }
        let server = "127.0.0.1:\(peer.port)"
        let start = PeerClient.monotonicNanoseconds()
        let failure = Self.failure { () throws(PeerClient.Failure) in
            try PeerClient(timeoutMilliseconds: 300).send(method: "GET", server: server, path: "/")
        }
        let elapsed = Self.milliseconds(since: start)
        #expect(failure == .timeout(server: server, milliseconds: 300))
        #expect(elapsed >= 300 && elapsed < 500, "\(elapsed) ms")
    }

    @Test func aClosedPortIsRefusedAtOnce() throws {
        let port = try #require(LoopbackPorts.free(1)?.first)   // free now: bound, then closed
        let server = "127.0.0.1:\(port)"
        let start = PeerClient.monotonicNanoseconds()
        let failure = Self.failure { () throws(PeerClient.Failure) in
            try PeerClient().send(method: "GET", server: server, path: "/")
        }
        #expect(failure == .refused(server: server))
        #expect(Self.milliseconds(since: start) < 100)
        #expect(failure?.description == "peer \(server): connection refused")
    }

    @Test func aBodyOverFourMebibytesIsRefused() throws {
        // By its Content-Length, before any of it is read.
        let declared = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 4194305\r\n\r\n".utf8)]))
        defer { declared.stop() }
        let server = "127.0.0.1:\(declared.port)"
        #expect(Self.failure { () throws(PeerClient.Failure) in try PeerClient().send(method: "GET", server: server, path: "/") }
                == .tooLarge(server: server, limitBytes: 4_194_304))
        // Without one, once 4 MiB + 1 bytes have come.
        let streamed = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\n\r\n".utf8), [UInt8](repeating: 7, count: 4_194_305)]))
        defer { streamed.stop() }
        let streamedServer = "127.0.0.1:\(streamed.port)"
        let failure = Self.failure { () throws(PeerClient.Failure) in try PeerClient().send(method: "GET", server: streamedServer, path: "/") }
        #expect(failure == .tooLarge(server: streamedServer, limitBytes: 4_194_304))
        #expect(failure?.description == "peer \(streamedServer): response body over 4194304 bytes")
    }

    @Test func aBodyOfExactlyFourMebibytesIsRead() throws {
        let body = (0..<4_194_304).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 4194304\r\n\r\n".utf8), body]))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.body.count == 4_194_304)
        #expect(response.body == body)
    }

    @Test(arguments: [
        ("HTTP/1.1 2OO OK\r\n\r\n", "status line \"HTTP/1.1 2OO OK\" is not HTTP/1.x NNN [reason]"),
        ("ICY 200 OK\r\n\r\n", "status line \"ICY 200 OK\" is not HTTP/1.x NNN [reason]"),
        ("HTTP/2 200\r\n\r\n", "status line \"HTTP/2 200\" is not HTTP/1.x NNN [reason]"),
        ("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "header line \"Bad Name: x\" is not NAME: VALUE"),
        ("HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n", "folded header line (obs-fold) \" folded\""),
        ("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "Content-Length 3, 4 is not one decimal length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length -1 is not one decimal length"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
         "Transfer-Encoding chunked is not supported (only Content-Length framing)"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "closed after 3 of 10 body bytes"),
        ("HTTP/1.1 200 OK\r\nContent-Le", "closed inside the header section"),
        ("", "closed without a response"),
    ])
    func aMalformedResponseIsRefusedSayingWhy(response: String, reason: String) throws {
        let peer = try CannedPeer(.reply([Array(response.utf8)]))
        defer { peer.stop() }
        let server = "127.0.0.1:\(peer.port)"
        let failure = Self.failure { () throws(PeerClient.Failure) in try PeerClient().send(method: "GET", server: server, path: "/") }
        #expect(failure == .malformedResponse(server: server, reason: reason))
        #expect(failure?.description == "peer \(server): malformed response: \(reason)")
    }

    @Test func interimResponsesAreSkippedAndRepeatedEqualLengthsAccepted() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok".utf8)]))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.status == 200 && response.body == Array("ok".utf8))
    }

    @Test func bareLineFeedsEndLinesToo() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\nContent-Length: 2\n\nok".utf8)]))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "GET", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.status == 200 && response.header("content-length") == "2" && response.body == Array("ok".utf8))
    }

    @Test func aHEADResponseHasNoBodyWhateverItsContentLength() throws {
        let peer = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n".utf8)]))
        defer { peer.stop() }
        let response = try PeerClient().send(method: "HEAD", server: "127.0.0.1:\(peer.port)", path: "/")
        #expect(response.status == 200 && response.body.isEmpty)
    }

    @Test func anIPv6ServerInBracketsAndANameResolve() throws {
        let six = try CannedPeer(ipv6: true, .reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nv6".utf8)]))
        defer { six.stop() }
        let response = try PeerClient().send(method: "GET", server: "[::1]:\(six.port)", path: "/")
        #expect(response.body == Array("v6".utf8))
        #expect(six.requests.first.map { String(decoding: $0, as: UTF8.self) }
                == "GET / HTTP/1.1\r\nHost: [::1]:\(six.port)\r\nConnection: close\r\n\r\n")

        let four = try CannedPeer(.reply([Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nname".utf8)]))
        defer { four.stop() }
        #expect(try PeerClient().send(method: "GET", server: "localhost:\(four.port)", path: "/").body == Array("name".utf8))
    }

    @Test func serverStringsSplitAsNginxWritesThem() throws {
        #expect(try PeerConnection.address(of: "127.0.0.1:8080") == ("127.0.0.1", "8080"))
        #expect(try PeerConnection.address(of: "[::1]:81") == ("::1", "81"))
        #expect(try PeerConnection.address(of: "node-a") == ("node-a", "80"))   // nginx's default port
        #expect(try PeerConnection.address(of: "[fe80::1]") == ("fe80::1", "80"))
        for bad in ["unix:/run/thumbd.sock", "host:0", "host:65536", ":8080", "[]:80"] {
            #expect(throws: PeerClient.Failure.self, "\(bad)") { try PeerConnection.address(of: bad) }
        }
        let failure = Self.failure { () throws(PeerClient.Failure) in
            try PeerClient().send(method: "GET", server: "no-such-host.invalid:80", path: "/")
        }
        guard case .unresolvable(let server, _) = failure else { Issue.record("\(String(describing: failure))"); return }
        #expect(server == "no-such-host.invalid:80")
    }
}
