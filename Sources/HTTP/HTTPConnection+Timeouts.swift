/// Timeouts (from the worker's sweep) and graceful shutdown.
extension HTTPConnection {
    /// Server shutdown: idle connections close now; busy ones after their current response.
    func drain() {
        switch phase {
        case .idle: close()
        case .dispatching, .awaitingResponse, .writing: drainRequested = true
        case .lingering, .closed: break
        }
    }

    /// Applies the timeouts at time `now` (ns). On the worker's thread, from its sweep.
    func sweep(now: UInt64) {
        switch phase {
        case .idle:
            if parser.isMidRequest {
                let since = parser.isInHead ? requestStartedAt : lastActivity
                if since != 0 && now &- since > context.headerTimeoutNanoseconds {
                    sendError(.requestTimeout)
                }
            } else if now &- lastActivity > context.idleTimeoutNanoseconds {
                close()
            }
        case .writing:
            if !writeSuspended && now &- lastActivity > context.idleTimeoutNanoseconds { close() }
        case .lingering:
            if now > lingerDeadline { close() }
        case .dispatching, .awaitingResponse, .closed:
            break
        }
    }
}
