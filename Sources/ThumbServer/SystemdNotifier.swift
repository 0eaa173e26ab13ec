import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's service notification protocol (sd_notify(3)), spoken without libsystemd: one
/// datagram of `KEY=VALUE` lines to the unix socket named in `$NOTIFY_SOCKET` (a path, or a name
/// in the abstract namespace when it starts with `@`). thumbd sends `READY=1` once it listens
/// with its index open (`Type=notify`), `STOPPING=1` when it begins to stop, and `WATCHDOG=1`
/// every `watchdogInterval` while `$WATCHDOG_USEC` is set (`WatchdogSec=`).
public struct SystemdNotifier: Sendable, Equatable {
    /// `$NOTIFY_SOCKET` as given: an absolute path, or `@name` for the abstract namespace.
    public let socket: String
    /// Seconds between two `WATCHDOG=1`: half of `$WATCHDOG_USEC` (as sd_watchdog_enabled(3)
    /// advises), nil when no watchdog is asked for, or it is asked of another process
    /// (`$WATCHDOG_PID`).
    public let watchdogInterval: Double?

    /// The notifier `environment` asks for; nil without `NOTIFY_SOCKET` (not run by systemd's
    /// `Type=notify`), or with one that is neither an absolute path nor `@name`, or too long for
    /// a `sockaddr_un` (108 bytes).
    public init?(environment: [String: String], pid: Int32 = getpid()) {
        guard let socket = environment["NOTIFY_SOCKET"], socket.hasPrefix("/") || socket.hasPrefix("@"),
              socket.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        self.socket = socket
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == pid } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let microseconds = Int(text), microseconds > 0 {
            watchdogInterval = Double(microseconds) / 2e6
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (newline-separated `KEY=VALUE` assignments, e.g. `READY=1`) in one datagram.
    /// Returns whether it was sent; a failure is not thumbd's to act on (systemd then times the
    /// start out, or the watchdog fires).
    @discardableResult
    public func send(_ state: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socket.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }   // abstract: a leading NUL, no terminator
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (i, byte) in name.enumerated() { path[i] = byte }
        }
        // A path's length counts its terminating NUL (zeroed above); an abstract name's does not.
        let length = MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1)
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(length))
            }
        }
        return sent == bytes.count
    }
}
