/// Tells a responder that the client of a request went away before its response was written:
/// the connection closed, reset or shut its sending side while the response was still being
/// produced (nginx's "client prematurely closed connection", logged as 499). A responder that
/// keeps work waiting for a request (a render queued for it) registers a handler with `onAbort`
/// so that work nobody waits for any more can be dropped.
///
/// A request read by a server carries one; a request made by hand (tests driving a responder
/// directly) carries an inert one. Costs one reference to its event loop's worker until a
/// handler is registered.
public struct HTTPClientAbort: Sendable {
    /// The worker whose loop thread read the request; nil outside a server.
    let worker: HTTPWorker?

    /// An inert signal: `onAbort` does nothing.
    public init() {
        worker = nil
    }

    init(worker: HTTPWorker) {
        self.worker = worker
    }

    /// Registers `handler`, to run once on the connection's event loop thread if the client
    /// goes away before this request's response is written; it replaces a handler registered
    /// before for the same request, and is dropped unrun once the response is written. It must
    /// not block (it runs on an event loop).
    ///
    /// Call it only synchronously from inside `HTTPResponder.respond` for this request, on the
    /// thread that called `respond` (a completion on another thread, later, must not: the
    /// worker is not retained). On a request not read by a server it does nothing.
    public func onAbort(_ handler: @escaping @Sendable () -> Void) {
        guard let worker, worker.isCurrent, let connection = worker.dispatching else { return }
        connection.abortHandler = handler
    }
}
