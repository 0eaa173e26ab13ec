#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
import HTTP

@Suite("Server: start and shutdown")
struct HTTPServerShutdownTests {
    @Test func shutdownLetsInFlightFinishAndClosesIdle() throws {
        let s = try RunningServer()
        let idle = try s.client()
        try idle.send(get("/idle"))
        _ = try idle.readResponse()
        let busy = try s.client()
        try busy.send(get("/slow?ms=300"))
        usleep(50_000)

        let done = DispatchSemaphore(value: 0)
        let started = Date()
        s.server.shutdown(gracePeriod: 3) { done.signal() }
        #expect(try idle.isClosedByServer())
        let r = try busy.readResponse()
        #expect(r.status == 200)
        #expect(r.header("Connection") == "close")
        #expect(try busy.isClosedByServer())
        #expect(done.wait(timeout: .now() + 2) == .success)
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(s.server.connectionCounts.open == 0)
        #expect(throws: TestClientError.self) { try s.client() }
    }

    @Test func shutdownForcesCloseAfterGracePeriod() throws {
        let s = try RunningServer()
        let c = try s.client()
        try c.send(get("/never"))
        usleep(50_000)
        let started = Date()
        #expect(s.stop(gracePeriod: 0.3, wait: 3))
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.25 && elapsed < 2)
        #expect(try c.isClosedByServer())
    }

    @Test func shutdownWithoutConnectionsCompletesAtOnce() throws {
        let s = try RunningServer()
        #expect(s.stop(gracePeriod: 5, wait: 1))
    }

    @Test func portInUseIsReported() throws {
        let s = try RunningServer()
        defer { s.stop() }
        var configuration = HTTPServerConfiguration()
        configuration.port = s.port
        HTTPProcess.ignoreBrokenPipes()   // the launcher's part (thumbd's ProcessSetup)
        let second = HTTPServer(configuration: configuration, responder: TestResponder())
        #expect {
            try second.start()
        } throws: { error in
            guard case HTTPServerError.bindFailed(let e, let message) = error else { return false }
            return e == EADDRINUSE && message == "port \(s.port) is in use"
        }
    }

    @Test func unresolvableHostIsReported() {
        var configuration = HTTPServerConfiguration()
        configuration.host = "not a host"
        HTTPProcess.ignoreBrokenPipes()   // the launcher's part (thumbd's ProcessSetup)
        let server = HTTPServer(configuration: configuration, responder: TestResponder())
        #expect(throws: HTTPServerError.cannotResolveHost("not a host")) { try server.start() }
    }
}
