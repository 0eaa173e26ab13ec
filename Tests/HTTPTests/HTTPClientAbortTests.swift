#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HTTP
import Testing

/// A client that goes away while its response is produced is reported as 499 (nginx's "client
/// closed request") and the responder's abort handler runs; one that only half-closes after
/// pipelining is still answered.
@Suite(.serialized) struct HTTPClientAbortTests {
    /// Waits up to 2 s for `target` to be among the aborted ones.
    func waitForAbort(of target: String) -> Bool {
        for _ in 0..<200 {
            if TestResponder.aborted.withLock({ $0.contains(target) }) { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func aClientThatClosesIsReportedAs499AndItsHandlerRuns() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let target = "/abortable?id=\(UUID().uuidString)"
        do {
            let client = try s.client()
            try client.send(get(target))
            #expect(s.waitForOpenConnections(1) == 1)
        }   // closed here
        #expect(waitForAbort(of: target))
        let records = s.log.wait(for: 1)
        #expect(records.map(\.status) == [499])
        #expect(records.first?.target == target)
        #expect(records.first?.bodyBytes == 0)
        #expect(s.waitForOpenConnections(0) == 0)
    }

    @Test func aResetClientIsReportedAs499() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let target = "/abortable?id=\(UUID().uuidString)"
        let client = try s.client()
        try client.send(get(target))
        #expect(s.waitForOpenConnections(1) == 1)
        // SO_LINGER 0: close sends a reset instead of a FIN.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        _ = shutdown(client.fd, Int32(SHUT_RDWR))
        #expect(waitForAbort(of: target))
        #expect(s.log.wait(for: 1).map(\.status) == [499])
    }

    @Test func onlyAHandlerRegisteredInsideRespondIsRun() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let client = try s.client()
        // Answered: the client leaving afterwards is no abort of it.
        try client.send(get("/slow?ms=10"))
        #expect(try client.readResponse().status == 200)
        try client.send(get("/abortable-late?id=\(UUID().uuidString)"))
        let before = TestResponder.aborted.withLock { $0 }
        _ = shutdown(client.fd, Int32(SHUT_WR))
        #expect(s.log.wait(for: 2).map(\.status) == [200, 499])
        usleep(100_000)
        // Registered from another thread after `respond` returned: ignored.
        #expect(TestResponder.aborted.withLock { $0 } == before)
    }

    @Test func aResponseCutOffByAResetIsStillReported() throws {
        let s = try RunningServer()
        defer { s.stop() }
        do {
            let client = try s.client(receiveBufferBytes: 4096)
            try client.send(get("/big"))
            _ = try client.readBytes(1000, chunk: 1000)   // the response has started: 8 MiB cannot fit the buffers
            // SO_LINGER 0: the close below (the client going away) sends a reset.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        let records = s.log.wait(for: 1)
        #expect(records.map(\.status) == [200])
        #expect((records.first?.bodyBytes ?? 0) > 0 && (records.first?.bodyBytes ?? .max) < 8 << 20)
        #expect(s.waitForOpenConnections(0) == 0)
    }

    @Test func aHalfCloseAfterPipelinedRequestsIsAnswered() throws {
        let s = try RunningServer()
        defer { s.stop() }
        let client = try s.client()
        try client.send(get("/slow?ms=50") + get("/two"))
        _ = shutdown(client.fd, Int32(SHUT_WR))
        let first = try client.readResponse()
        let second = try client.readResponse()
        #expect(first.status == 200 && first.text == "hello /slow?ms=50")
        #expect(second.text == "hello /two")
        #expect(s.log.wait(for: 2).map(\.status) == [200, 200])
    }
}
