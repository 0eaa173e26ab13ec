#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Locking
import Foundation
import Synchronization

/// Something registered with an `HTTPEventLoop`, told what its descriptor is ready for.
protocol HTTPEventHandler: AnyObject {
    /// `events` holds epoll bits (`clinux_epoll_in`, `clinux_epoll_out`, `clinux_epoll_err`, `clinux_epoll_hup`).
    /// Called on the loop's thread.
    func handleEvents(_ events: UInt32)
}

/// One thread that waits in `epoll_wait(2)` (level-triggered) and runs the handlers of the
/// sockets registered with it itself, nginx-style: a ready socket costs no thread switch.
///
/// Why not a Dispatch read source per connection: on Linux, libdispatch's manager thread owns
/// epoll; every event is handed to a worker thread, and re-arming the source afterwards wakes
/// the manager again through an eventfd. `perf` put that at about 30% of a cache hit's CPU
/// time (about 0.55 context switches per request). Dispatch still accepts connections and
/// runs everything that blocks (renders, disk reads).
///
/// Work from other threads (a render's completion, accepting a socket) arrives with
/// `execute`, which queues the block and wakes the loop through an eventfd.
///
/// Locking: `mailbox` is a `Mutex`; everything else is confined to the loop's thread, except
/// the immutable descriptors and `threadID` (atomic). Debug builds assert the confinement at
/// the registration calls (`assert(isCurrent)`, as swift-nio's `assertInEventLoop` does);
/// release builds compile the checks out.
final class HTTPEventLoop: @unchecked Sendable {
    /// Blocks queued by `execute`, and whether the loop has ended (then blocks are dropped).
    private struct Mailbox {
        var blocks: [@Sendable () -> Void] = []
        var ended = false
    }

    private let epollFD: Int32
    /// Tests only: the epoll descriptor, to make `epoll_wait` fail.
    var epollDescriptorForTesting: Int32 { epollFD }
    private let wakeFD: Int32
    private let mailbox = Mutex(Mailbox())
    private let threadID = Atomic<UInt>(0)
    private let name: String
    /// `tick` runs on the loop's thread about every `tickInterval` ns (timeout sweeps).
    private let tickInterval: UInt64
    private var tick: (() -> Void)?
    private var handlers: [UInt64: any HTTPEventHandler] = [:]
    /// Registration ids; 0 is the wake eventfd.
    private var nextID: UInt64 = 1
    private var running = true
    /// When the last `epoll_wait` returned, ns of `DispatchTime` (read once per round of events,
    /// as nginx caches its time): for timestamps that timeouts are measured against.
    private(set) var roundStartedAt: UInt64 = DispatchTime.now().uptimeNanoseconds

    /// Creates the epoll instance and the wake eventfd; the thread starts with `start`.
    /// - Throws: `HTTPServerError.eventLoopFailed` when the kernel refuses either descriptor.
    /// Where a failed `epoll_wait` is counted.
    private let counts: HTTPServerCounts

    init(name: String, tickInterval: UInt64, counts: HTTPServerCounts = HTTPServerCounts()) throws(HTTPServerError) {
        self.counts = counts
        let e = clinux_epoll_create()
        guard e >= 0 else { throw Self.failure("epoll_create1", errno) }
        let w = clinux_eventfd()
        guard w >= 0 else {
            let code = errno
            _ = Glibc.close(e)
            throw Self.failure("eventfd", code)
        }
        guard clinux_epoll_add(e, w, clinux_epoll_in, 0) == 0 else {
            let code = errno
            _ = Glibc.close(e)
            _ = Glibc.close(w)
            throw Self.failure("epoll_ctl", code)
        }
        epollFD = e
        wakeFD = w
        self.name = name
        self.tickInterval = max(tickInterval, 1_000_000)
    }

    private static func failure(_ call: String, _ code: Int32) -> HTTPServerError {
        .eventLoopFailed(errno: code, message: call + ": " + String(cString: strerror(code)))
    }

    /// Starts the loop's thread; `tick` runs about every `tickInterval` ns on it.
    func start(tick: @escaping () -> Void) {
        self.tick = tick
        Thread { [self] in run() }.start()
    }

    /// Whether the caller is running on the loop's thread.
    @inline(__always) var isCurrent: Bool {
        threadID.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// Runs `block` on the loop's thread, after the events being handled; from any thread.
    /// Dropped once the loop has ended.
    func execute(_ block: @escaping @Sendable () -> Void) {
        mailbox.withLock { m in
            guard !m.ended else { return }
            m.blocks.append(block)
            // Signalled under the lock, so the loop cannot close the eventfd in between.
            if m.blocks.count == 1 { _ = clinux_eventfd_signal(wakeFD) }
        }
    }

    /// Ends the loop after the blocks queued so far; from any thread. Its descriptors close and
    /// its handlers are released on the way out.
    func stop() {
        execute { [self] in running = false }
    }

    /// Whether the loop has ended (its thread is done with it and its descriptors are closed).
    var hasEnded: Bool { mailbox.withLock { $0.ended } }

    // MARK: Registration (on the loop's thread)

    /// Registers `fd` for `events`; the id names it in `modify` and `unregister`.
    /// Returns nil (errno set) when epoll refuses it.
    func register(_ fd: Int32, events: UInt32, handler: any HTTPEventHandler) -> UInt64? {
        assert(isCurrent, "HTTPEventLoop.register off the loop's thread")
        let id = nextID
        nextID += 1
        guard clinux_epoll_add(epollFD, fd, events, id) == 0 else { return nil }
        handlers[id] = handler
        return id
    }

    /// Changes what `fd` waits for. False (errno set) when epoll refuses.
    func modify(_ fd: Int32, id: UInt64, events: UInt32) -> Bool {
        assert(isCurrent, "HTTPEventLoop.modify off the loop's thread")
        return clinux_epoll_modify(epollFD, fd, events, id) == 0
    }

    /// Forgets a registration. Closing the descriptor afterwards removes it from epoll;
    /// events already collected for it in this round are dropped.
    func unregister(_ id: UInt64) {
        assert(isCurrent, "HTTPEventLoop.unregister off the loop's thread")
        handlers[id] = nil
    }

    // MARK: The loop

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        ThreadRole.current = .eventLoop
        clinux_name_thread(name)
        let capacity = 256
        let ids = UnsafeMutablePointer<UInt64>.allocate(capacity: capacity)
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
        var nextTick = DispatchTime.now().uptimeNanoseconds &+ tickInterval
        var now = DispatchTime.now().uptimeNanoseconds
        while running {
            let timeout = nextTick > now ? Int32(min((nextTick - now + 999_999) / 1_000_000, 60_000)) : 0
            let n = clinux_epoll_wait(epollFD, ids, events, Int32(capacity), timeout)
            roundStartedAt = DispatchTime.now().uptimeNanoseconds
            if n < 0 && errno != EINTR {
                // EBADF/EINVAL cannot happen with our own descriptor; counted, and backed off
                // rather than spun.
                counts.waitFailed()
                usleep(10_000)
            }
            for i in 0..<Int(max(n, 0)) {
                if ids[i] == 0 {
                    _ = clinux_eventfd_drain(wakeFD)
                } else if let handler = handlers[ids[i]] {
                    handler.handleEvents(events[i])
                }
            }
            runMailbox()
            now = DispatchTime.now().uptimeNanoseconds
            if now >= nextTick {
                tick?()
                nextTick = now &+ tickInterval
            }
        }
        ids.deallocate()
        events.deallocate()
        end()
    }

    /// Runs the queued blocks. The eventfd was drained first, so a block queued while these
    /// run signals it again and is not missed.
    private func runMailbox() {
        let blocks = mailbox.withLock { m -> [@Sendable () -> Void] in
            if m.blocks.isEmpty { return [] }
            var taken: [@Sendable () -> Void] = []
            swap(&taken, &m.blocks)
            return taken
        }
        for block in blocks { block() }
    }

    private func end() {
        mailbox.withLock { m in
            m.ended = true
            m.blocks = []
        }
        handlers = [:]
        tick = nil
        _ = Glibc.close(wakeFD)
        _ = Glibc.close(epollFD)
    }
}
