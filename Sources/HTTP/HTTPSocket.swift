#if canImport(Glibc)
import Glibc
#endif

/// The few POSIX socket calls the server makes, wrapped so the rest reads as intent.
enum HTTPSocket {
    /// Creates a non-blocking listening socket bound to `host:port`; returns it and the bound
    /// port (the ephemeral one when `port` is 0).
    /// - Throws: `HTTPServerError` naming the failing step and errno.
    static func listen(host: String, port: UInt16, backlog: Int32) throws(HTTPServerError) -> (Int32, UInt16) {
        let address = try resolve(host: host, port: port)
        let family = address.family
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socketFailed(errno: errno, message: errorText(errno)) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockaddr { bind(fd, $0, $1) }
        if bound != 0 {
            let e = errno
            close(fd)
            let message = e == EADDRINUSE ? "port \(port) is in use" : "\(host):\(port): \(errorText(e))"
            throw .bindFailed(errno: e, message: message)
        }
        if Glibc.listen(fd, backlog) != 0 {
            let e = errno
            close(fd)
            throw .listenFailed(errno: e, message: errorText(e))
        }
        return (fd, boundPort(fd) ?? port)
    }

    /// A socket address for an IP literal or `localhost`.
    enum Address {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)

        var family: Int32 {
            switch self {
            case .v4: AF_INET
            case .v6: AF_INET6
            }
        }

        func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            switch self {
            case .v4(var a):
                return withUnsafePointer(to: &a) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            case .v6(var a):
                return withUnsafePointer(to: &a) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            }
        }
    }

    static func resolve(host: String, port: UInt16) throws(HTTPServerError) -> Address {
        let literal = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            return .v4(v4)
        }
        var v6 = sockaddr_in6()
        let bare = literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            return .v6(v6)
        }
        throw .cannotResolveHost(host)
    }

    /// The local port of a bound socket.
    static func boundPort(_ fd: Int32) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard ok == 0 else { return nil }
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { p -> UInt16 in
            if family == sa_family_t(AF_INET6) {
                return p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    /// Accepts one connection as a non-blocking, close-on-exec socket: the fd and the peer's
    /// address, as accept(2) reports it (nil for a family other than IPv4 and IPv6); or -1 with
    /// errno set. (`accept4` is not exported by the Glibc module, so this is accept + two `fcntl`s.)
    static func accept(_ listener: Int32) -> (fd: Int32, peer: IPAddress?) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(listener, $0, &length) }
        }
        guard fd >= 0 else { return (fd, nil) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return (fd, IPAddress(socketAddress: storage))
    }

    /// Turns off Nagle's algorithm so small responses leave at once.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Whether SIGPIPE is ignored now (`HTTPProcess.ignoreBrokenPipes`).
    static var brokenPipesIgnored: Bool {
        var action = sigaction()
        guard sigaction(SIGPIPE, nil, &action) == 0 else { return false }
        return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    static func errorText(_ e: Int32) -> String {
        String(cString: strerror(e))
    }
}
