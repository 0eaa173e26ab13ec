#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch
import Foundation
import Testing
@testable import HTTP

@Suite("Event loop")
struct HTTPEventLoopTests {
    /// Records what the loop reports for one end of a socket pair.
    final class Recorder: HTTPEventHandler, @unchecked Sendable {
        let fd: Int32
        let seen = DispatchSemaphore(value: 0)
        var bytes: [UInt8] = []
        var onLoopThread = false
        weak var loop: HTTPEventLoop?
        init(fd: Int32) { self.fd = fd }
        func handleEvents(_ events: UInt32) {
            onLoopThread = loop?.isCurrent ?? false
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(fd, &buffer, buffer.count)
            if n > 0 { bytes += buffer[0..<n] }
            seen.signal()
        }
    }

    func socketPair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    @Test func aReadableSocketReachesItsHandlerOnTheLoopThread() throws {
        let loop = try HTTPEventLoop(name: "test-loop", tickInterval: 50_000_000)
        loop.start {}
        defer { loop.stop() }
        let (a, b) = socketPair()
        defer { close(a); close(b) }
        let recorder = Recorder(fd: a)
        recorder.loop = loop
        let registered = DispatchSemaphore(value: 0)
        loop.execute {
            #expect(loop.register(a, events: clinux_epoll_in, handler: recorder) != nil)
            registered.signal()
        }
        #expect(registered.wait(timeout: .now() + 2) == .success)
        #expect(!loop.isCurrent)
        _ = write(b, "ping", 4)
        #expect(recorder.seen.wait(timeout: .now() + 2) == .success)
        #expect(recorder.bytes == Array("ping".utf8))
        #expect(recorder.onLoopThread)
    }

    @Test func blocksRunInOrderAndTheTickRepeats() throws {
        let loop = try HTTPEventLoop(name: "test-loop", tickInterval: 10_000_000)
        let ticks = DispatchSemaphore(value: 0)
        loop.start { ticks.signal() }
        defer { loop.stop() }
        let order = OrderBox()
        let done = DispatchSemaphore(value: 0)
        for i in 0..<100 { loop.execute { order.append(i) } }
        loop.execute { done.signal() }
        #expect(done.wait(timeout: .now() + 2) == .success)
        #expect(order.values == Array(0..<100))
        for _ in 0..<3 { #expect(ticks.wait(timeout: .now() + 2) == .success) }
    }

    /// A failing `epoll_wait` (here the loop's epoll descriptor replaced, with dup2, by one that
    /// is not an epoll instance: EINVAL) is counted in `HTTPServerCounts.failedWaits` (`/stats`
    /// `connections.event_loop_wait_errors`) and paced at 10 ms, not spun; the loop still runs
    /// its blocks and stops.
    @Test func aFailingWaitIsCountedAndPaced() throws {
        let counts = HTTPServerCounts()
        let loop = try HTTPEventLoop(name: "test-loop", tickInterval: 1_000_000_000, counts: counts)
        let devNull = open("/dev/null", O_RDONLY | O_CLOEXEC)
        #expect(devNull >= 0)
        #expect(dup2(devNull, loop.epollDescriptorForTesting) == loop.epollDescriptorForTesting)
        close(devNull)
        loop.start {}
        var waited = 0
        while counts.failedWaits < 3 && waited < 300 { usleep(10_000); waited += 1 }
        #expect(counts.failedWaits >= 3)
        let ran = DispatchSemaphore(value: 0)
        loop.execute { ran.signal() }
        #expect(ran.wait(timeout: .now() + 2) == .success)
        // Paced: over 200 ms, at most about 20 failed waits (10 ms each), never thousands.
        let before = counts.failedWaits
        usleep(200_000)
        #expect(counts.failedWaits - before <= 25)
        loop.stop()
        waited = 0
        while !loop.hasEnded && waited < 200 { usleep(10_000); waited += 1 }
        #expect(loop.hasEnded)
    }

    @Test func stopEndsTheLoopAndLaterBlocksAreDropped() throws {
        let loop = try HTTPEventLoop(name: "test-loop", tickInterval: 50_000_000)
        loop.start {}
        loop.stop()
        var waited = 0
        while !loop.hasEnded && waited < 200 { usleep(10_000); waited += 1 }
        #expect(loop.hasEnded)
        let ran = DispatchSemaphore(value: 0)
        loop.execute { ran.signal() }
        #expect(ran.wait(timeout: .now() + 0.2) == .timedOut)
    }

    @Test func aServerShutdownEndsEveryWorkerLoop() throws {
        let s = try RunningServer()
        let client = try s.client()
        try client.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        _ = try client.readResponse()
        let loops = s.server.state.withLock { $0.workers.map(\.loop) }
        #expect(loops.count >= 1)
        #expect(loops.allSatisfy { !$0.hasEnded })
        #expect(s.stop(gracePeriod: 1, wait: 3))
        var waited = 0
        while !loops.allSatisfy({ $0.hasEnded }) && waited < 200 { usleep(10_000); waited += 1 }
        let ended = loops.filter { $0.hasEnded }.count
        #expect(ended == loops.count)
    }

    final class OrderBox: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Int] = []
        func append(_ i: Int) { lock.lock(); items.append(i); lock.unlock() }
        var values: [Int] { lock.lock(); defer { lock.unlock() }; return items }
    }
}
