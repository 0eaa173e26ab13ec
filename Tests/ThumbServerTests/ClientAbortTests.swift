import Foundation
import Synchronization
import Testing
import TestSupport

/// A render queued for clients that have all gone away is dropped before it starts (a fling
/// must not spend the render pool on cells scrolled past); a render any client still waits
/// for runs. Renders are held by a `GatedRenderer` on one worker, so the order is the test's.
@Suite(.serialized) struct ClientAbortTests {
    /// A server with one render worker whose renders wait for `renderer.open()`.
    func server() throws -> (ServerHarness, GatedRenderer) {
        let renderer = GatedRenderer()
        let server = try ServerHarness(renderer: renderer) { $0.renderWorkers = 1 }
        return (server, renderer)
    }

    /// Sends a GET for `target` on a socket of its own and leaves it open (the caller closes it).
    func send(_ target: String, port: UInt16) throws -> Int32 {
        let fd = try TestClient.connect(port: port)
        let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
        return fd
    }

    /// A GET on another thread; its response once it has come.
    func getInBackground(_ target: String, port: UInt16) -> @Sendable () -> TestResponse? {
        let result = Mutex<TestResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let response = try? TestClient.get(port: port, target)
            result.withLock { $0 = response }
            done.signal()
        }
        return {
            _ = done.wait(timeout: .now() + 30)
            return result.withLock { $0 }
        }
    }

    /// Polls `/stats` (up to 10 s) until `read` gives `value`; the last value read.
    func waitFor(_ server: ServerHarness, _ value: Int, _ read: ([String: Any]) -> Int) throws -> Int {
        var last = -1
        for _ in 0..<1000 {
            last = read(try server.stats())
            if last == value { return last }
            usleep(10_000)
        }
        return last
    }

    func renders(_ field: String) -> ([String: Any]) -> Int {
        { (($0["renders"] as? [String: Any])?[field] as? NSNumber)?.intValue ?? -1 }
    }

    let aborted: ([String: Any]) -> Int = {
        ((($0["requests"] as? [String: Any])?["by_status"] as? [String: Any])?["499"] as? NSNumber)?.intValue ?? 0
    }

    @Test func aQueuedRenderWhoseOnlyClientLeftIsNotRun() throws {
        let (server, renderer) = try server()
        let first = getInBackground("/thumbnails/3/Landscape_1.jpg", port: server.port)
        #expect(renderer.waitForStarts(1))   // the one worker is busy with Landscape_1
        let leaving = try send("/thumbnails/3/Landscape_6.jpg", port: server.port)
        #expect(try waitFor(server, 1, renders("queued")) == 1)
        close(leaving)
        #expect(try waitFor(server, 1, aborted) == 1)
        renderer.open()
        let response = first()
        #expect(response?.status == 200)
        #expect(response?.header("X-Cache") == "MISS")
        #expect(try waitFor(server, 0, renders("queued")) == 0)
        #expect(try waitFor(server, 0, renders("in_flight")) == 0)
        #expect(renderer.started == ["Landscape_1.jpg"])
        #expect(try waitFor(server, 1, renders("abandoned")) == 1)
        #expect(try waitFor(server, 1, renders("total")) == 1)
        #expect(try waitFor(server, 0, renders("flights")) == 0)
        // Nothing is left behind: the next request for it renders.
        let again = try server.get("/thumbnails/3/Landscape_6.jpg")
        #expect(again.status == 200)
        #expect(again.header("X-Cache") == "MISS")
        #expect(renderer.started == ["Landscape_1.jpg", "Landscape_6.jpg"])
    }

    @Test func aQueuedRenderRunsWhileOneOfItsClientsWaits() throws {
        let (server, renderer) = try server()
        let first = getInBackground("/thumbnails/3/Landscape_1.jpg", port: server.port)
        #expect(renderer.waitForStarts(1))
        let staying = getInBackground("/thumbnails/3/Landscape_6.jpg", port: server.port)
        #expect(try waitFor(server, 1, renders("queued")) == 1)
        let leaving = try send("/thumbnails/3/Landscape_6.jpg", port: server.port)
        #expect(try waitFor(server, 1, renders("coalesced")) == 1)
        close(leaving)
        #expect(try waitFor(server, 1, aborted) == 1)
        renderer.open()
        #expect(first()?.status == 200)
        let response = staying()
        #expect(response?.status == 200)
        #expect(response?.image?.width == 393 && response?.image?.height == 393)   // grid 3: a 393 px square
        #expect(renderer.started == ["Landscape_1.jpg", "Landscape_6.jpg"])
        #expect(try waitFor(server, 0, renders("abandoned")) == 0)
    }

    @Test func aRenderThatStartedFinishesAndIsStoredWhenItsClientLeaves() throws {
        let (server, renderer) = try server()
        let leaving = try send("/thumbnails/3/Landscape_1.jpg", port: server.port)
        #expect(renderer.waitForStarts(1))
        close(leaving)
        #expect(try waitFor(server, 1, aborted) == 1)
        renderer.open()
        #expect(try waitFor(server, 0, renders("in_flight")) == 0)
        let again = try server.get("/thumbnails/3/Landscape_1.jpg")
        #expect(again.status == 200)
        #expect(again.header("X-Cache")?.hasPrefix("HIT") == true)
        #expect(renderer.started == ["Landscape_1.jpg"])
    }
}
