#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A listening socket bound before its server is built: thumbd binds its port before it makes
/// anything on disk, so that a start that finds the port taken leaves nothing behind. Given to
/// `HTTPServer.init`, whose `start()` accepts on it (and whose shutdown closes it); closed at
/// deinit when no server took it. Connections that arrive before `start()` wait in the kernel's
/// listen backlog.
public final class HTTPListener: Sendable {
    /// The bound port: the ephemeral one the kernel chose when asked for 0.
    public let port: UInt16
    /// The socket until a server takes it (-1 after).
    private let descriptor: Atomic<Int32>

    /// Binds `host:port` (an IP literal or `localhost`) and listens with a queue of `backlog`
    /// connections (`HTTPServerConfiguration.backlog`, 1,024 by default).
    /// - Throws: `HTTPServerError` when the host is not an IP literal, the port is in use, or
    ///   `socket(2)`/`listen(2)` fail.
    public init(host: String, port: UInt16, backlog: Int32 = 1024) throws(HTTPServerError) {
        let (fd, bound) = try HTTPSocket.listen(host: host, port: port, backlog: backlog)
        self.port = bound
        descriptor = Atomic(fd)
    }

    /// The socket, for the server that accepts on it; nil when one took it already.
    func take() -> Int32? {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        return fd >= 0 ? fd : nil
    }

    deinit {
        if let fd = take() { _ = Glibc.close(fd) }
    }
}
