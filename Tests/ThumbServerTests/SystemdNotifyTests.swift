import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Rendering
import Testing
import TestSupport
@testable import ThumbServer

/// systemd's notification protocol (issue 29, item 3): READY=1 once the server accepts, WATCHDOG=1
/// while its event loops turn, STOPPING=1 when it stops; to a socket path or an abstract name.
@Suite struct SystemdNotifyTests {
    /// A datagram socket standing for systemd's: bound to `name` (a path, or `@name` abstract).
    final class NotifySocket {
        let fd: Int32
        let name: String

        init(_ name: String) throws {
            self.name = name
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { for (i, b) in bytes.enumerated() { $0[i] = b } }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            try #require(fd >= 0 && bound == 0, "cannot bind \(name): \(String(cString: strerror(errno)))")
        }

        deinit {
            close(fd)
            if name.hasPrefix("/") { unlink(name) }
        }

        /// The next datagram, waiting up to `seconds`; nil when none came.
        func receive(within seconds: Double = 10) -> String? {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count < 0 ? nil : String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }

    @Test func theEnvironmentSaysWhereAndHowOften() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/socket"]) == nil)
        let plain = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/run/systemd/notify"])
        #expect(plain?.socket == "/run/systemd/notify" && plain?.watchdogInterval == nil)
        let watched = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000"])
        #expect(watched?.watchdogInterval == 15)
        let ours = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"])
        #expect(ours?.watchdogInterval == 15)
        let another = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"])
        #expect(another != nil && another?.watchdogInterval == nil)
    }

    /// A server started with `NOTIFY_SOCKET` set: READY=1 arrives once it accepts (a GET at that
    /// moment is answered), WATCHDOG=1 every half of `WATCHDOG_USEC`, STOPPING=1 at shutdown.
    @Test(arguments: ["path", "abstract"])
    func readyOnceTheServerAcceptsThenWatchdogThenStopping(kind: String) throws {
        let root = TemporaryDirectory("thumbd-notify")
        let name = kind == "path" ? root.path + "/notify" : "@thumbd-notify-\(UUID().uuidString)"
        let systemd = try NotifySocket(name)
        var config = Config()
        config.library = Paths.fixturePhotos
        config.cacheDirectory = root.path + "/cache"
        config.port = 0
        config.libraryWatch = false
        config.shutdownGraceSeconds = 1
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": name, "WATCHDOG_USEC": "200000"]))
        let resources = try Thumbd.Resources.open(config, process: ProcessSetup.prepare(), listening: true)
        let port = try #require(resources.listener?.port)
        let thumbd = Thumbd(config: config, resources: resources, renderer: Renderer(), notifier: notifier)
        #expect(systemd.receive(within: 0) == nil, "a notification before start")
        DispatchQueue.global().async { _ = try? thumbd.start() }
        let ready = systemd.receive()
        #expect(thumbd.server.isAccepting, "READY=1 came before the server accepted")
        #expect(ready == "READY=1\nSTATUS=serving \(Paths.fixturePhotos) on port \(port)")
        #expect(try TestClient.get(port: port, "/healthz").status == 200)
        #expect(systemd.receive() == "WATCHDOG=1")
        let stopped = DispatchSemaphore(value: 0)
        thumbd.shutdown { stopped.signal() }
        var after: [String] = []
        while let message = systemd.receive(within: 2), message != "STOPPING=1" { after.append(message) }
        #expect(after.allSatisfy { $0 == "WATCHDOG=1" }, "\(after)")
        #expect(stopped.wait(timeout: .now() + 10) == .success)
    }
}
