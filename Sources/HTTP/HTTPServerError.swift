/// Why `HTTPServer.start()` failed.
public enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not an IP literal nor `localhost`.
    case cannotResolveHost(String)
    /// `socket(2)` failed; `errno` as reported.
    case socketFailed(errno: Int32, message: String)
    /// `bind(2)` failed, e.g. `EADDRINUSE`: "port 8080 is in use".
    case bindFailed(errno: Int32, message: String)
    /// `listen(2)` failed.
    case listenFailed(errno: Int32, message: String)
    /// An event loop's `epoll_create1(2)` or `eventfd(2)` failed (e.g. `EMFILE`).
    case eventLoopFailed(errno: Int32, message: String)
    /// `start()` was called twice, or after `shutdown`.
    case alreadyStarted

    public var description: String {
        switch self {
        case .cannotResolveHost(let host):
            "cannot resolve host \"\(host)\": use an IP address or \"localhost\""
        case .socketFailed(let e, let message): "cannot create a socket: \(message) (errno \(e))"
        case .bindFailed(let e, let message): "cannot bind: \(message) (errno \(e))"
        case .listenFailed(let e, let message): "cannot listen: \(message) (errno \(e))"
        case .eventLoopFailed(let e, let message): "cannot create an event loop: \(message) (errno \(e))"
        case .alreadyStarted: "the server was already started"
        }
    }
}
