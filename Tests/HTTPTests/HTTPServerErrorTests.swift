#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import HTTP

@Suite("Server: errors and timeouts")
struct HTTPServerErrorTests {
    @Test func malformedRequestGets400AndCloseThenNextConnectionWorks() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let bad = try s.client()
        try bad.send("GARBAGE\r\n\r\n")
        let r = try bad.readResponse()
        #expect(r.status == 400)
        #expect(r.header("Connection") == "close")
        #expect(r.header("Cache-Control") == "no-store")
        #expect(r.header("Content-Type") == "application/json")
        let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: String]
        #expect(json?["error"] == "bad_request")
        #expect(json?["message"]?.isEmpty == false)
        #expect(try bad.isClosedByServer())

        let good = try s.client()
        try good.send(get("/fine"))
        #expect(try good.readResponse().status == 200)
        let records = s.log.wait(for: 2)
        #expect(records.map(\.status).sorted() == [200, 400])
    }

    @Test func unsupportedVersionGets505() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let c = try s.client()
        try c.send("GET / HTTP/2.0\r\nHost: t\r\n\r\n")
        let r = try c.readResponse()
        #expect(r.status == 505)
        #expect(r.text.contains("version_not_supported"))
    }

    @Test func headerTimeoutGives408() throws {
        let s = try RunningServer { $0.headerTimeout = 0.5 }
        defer { s.stop() }
        let c = try s.client()
        let started = Date()
        try c.send("GET /slowloris HTTP/1.1\r\nHost: t\r\n")
        let r = try c.readResponse()
        let elapsed = Date().timeIntervalSince(started)
        #expect(r.status == 408)
        #expect(r.text.contains("request_timeout"))
        #expect(elapsed >= 0.45 && elapsed < 2, "408 after \(elapsed) s")
        #expect(try c.isClosedByServer())
    }

    /// A body that trickles in, one byte every 100 ms, never pausing as long as the header
    /// timeout: it once held its connection for as long as the client liked. Now the whole
    /// body must arrive within `bodyTimeout` of the head's end: 408 and close.
    @Test func aBodyThatTricklesInGets408AfterTheBodyTimeout() throws {
        let s = try RunningServer {
            $0.headerTimeout = 5
            $0.bodyTimeout = 0.5
        }
        defer { s.stop() }
        let c = try s.client()
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 20\r\n\r\n")
        for _ in 0..<20 {   // 2 s in all, four times the body timeout
            usleep(100_000)
            try? c.send("x")   // the server may have closed its side by now
        }
        let r = try c.readResponse()
        #expect(r.status == 408)
        #expect(r.text.contains("request_timeout"))
        #expect(try c.isClosedByServer())
        #expect(s.log.wait(for: 1).map(\.status) == [408])
    }

    @Test func idleKeepAliveConnectionIsClosedSilently() throws {
        let s = try RunningServer { $0.idleTimeout = 0.3 }
        defer { s.stop() }
        let c = try s.client()
        try c.send(get("/once"))
        _ = try c.readResponse()
        #expect(try c.isClosedByServer())
    }

    @Test func oversizedBodyGets413EvenWhileTheClientKeepsSending() throws {
        let s = try RunningServer { $0.maxBodyBytes = 1000 }
        defer { s.stop() }
        let c = try s.client()
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200000\r\n\r\n")
        try? c.send([UInt8](repeating: 0x41, count: 200_000))
        let r = try c.readResponse()
        #expect(r.status == 413)
        #expect(r.text.contains("payload_too_large"))
    }

    @Test func longRequestLineGets414AndLargeHeadGets431() throws {
        let s = try RunningServer {
            $0.maxRequestLineBytes = 100
            $0.maxHeaderBytes = 300
        }
        defer { s.stop() }
        let a = try s.client()
        try a.send(get("/" + String(repeating: "a", count: 200)))
        #expect(try a.readResponse().status == 414)
        let b = try s.client()
        try b.send(get("/", "X-Big: " + String(repeating: "b", count: 400) + "\r\n"))
        #expect(try b.readResponse().status == 431)
    }
}
