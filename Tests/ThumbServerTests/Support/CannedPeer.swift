import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in peer for `PeerClient`'s tests: a TCP listener on loopback (127.0.0.1 or ::1) at a
/// port the kernel picks, which reads each request whole (head, then its `Content-Length` body),
/// keeps its bytes, and answers as `behaviour` says, on a thread per connection.
final class CannedPeer: Sendable {
    enum Behaviour: Sendable {
        /// Writes these pieces one send(2) each, `pauseMilliseconds` apart, then closes.
        case reply([[UInt8]], pauseMilliseconds: Int = 0)
        /// Reads the request and never answers; the connection stays open until `stop()`.
        case silent
        /// Writes the first answer to the first connection, the second to the second..., the last
        /// to every later one, each in one send(2), then closes.
        case replies([[UInt8]])
    }

    let port: UInt16
    private let listener: Int32
    private let behaviour: Behaviour
    /// Each connection's request bytes, in order of arrival; and the connections held open.
    private let state = Mutex<(requests: [[UInt8]], open: [Int32])>(([], []))

    /// A listener on 127.0.0.1, or on ::1 when `ipv6`.
    init(ipv6: Bool = false, _ behaviour: Behaviour) throws {
        self.behaviour = behaviour
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CannedPeerError(description: "socket: errno \(errno)") }
        var bound: UInt16?
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            bound = Self.bind(fd, &address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            bound = Self.bind(fd, &address)
        }
        guard let port = bound, listen(fd, 16) == 0 else {
            close(fd)
            throw CannedPeerError(description: "bind/listen: errno \(errno)")
        }
        self.port = port
        listener = fd
        let peer = self
        Thread { peer.acceptLoop() }.start()
    }

    /// The bytes of every request received so far, one array per connection.
    var requests: [[UInt8]] { state.withLock { $0.requests } }

    /// Stops accepting and closes the connections held open.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        let open = state.withLock { state in
            defer { state.open = [] }
            return state.open
        }
        open.forEach { close($0) }
    }

    deinit { close(listener) }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return   // shut down
            }
            let peer = self
            Thread { peer.serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Self.readRequest(connection)
        state.withLock { $0.requests.append(request) }
        switch behaviour {
        case .silent:
            state.withLock { $0.open.append(connection) }
        case .replies(let answers):
            let n = state.withLock { $0.requests.count }
            Self.write(answers[min(n, answers.count) - 1], to: connection)
            close(connection)
        case .reply(let pieces, let pause):
            for (i, piece) in pieces.enumerated() {
                if i > 0 && pause > 0 { usleep(useconds_t(pause * 1000)) }
                var sent = 0
                while sent < piece.count {
                    let n = piece[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    sent += n
                }
            }
            close(connection)
        }
    }

    private static func write(_ piece: [UInt8], to connection: Int32) {
        var sent = 0
        while sent < piece.count {
            let n = piece[sent...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            sent += n
        }
    }

    /// A request's head and as many body bytes as its `Content-Length` says (or what came
    /// before the client stopped sending).
    private static func readRequest(_ connection: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func more() -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if n > 0 { received += chunk[..<n] }
            return n > 0
        }
        let end = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            if let range = received.firstRange(of: end) { headEnd = range.upperBound; break }
            if !more() { return received }
        }
        let head = String(decoding: received[..<headEnd!], as: UTF8.self).lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        while received.count < headEnd! + length && more() {}
        return received
    }

    private static func bind<Address>(_ fd: Int32, _ address: inout Address) -> UInt16? {
        var length = socklen_t(MemoryLayout<Address>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard ok else { return nil }
        // sin_port and sin6_port both sit at offset 2, in network order.
        return withUnsafeBytes(of: &address) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }
}

struct CannedPeerError: Error, CustomStringConvertible { let description: String }
