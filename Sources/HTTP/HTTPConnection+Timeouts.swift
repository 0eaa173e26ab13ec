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
                // The head within the header timeout of its first byte; the body within the
                // body timeout of the head's end, however steadily it trickles in.
                let (since, limit) = parser.isInHead ? (requestStartedAt, context.headerTimeoutNanoseconds)
                    : (bodyStartedAt, context.bodyTimeoutNanoseconds)
                if since != 0 && now &- since > limit {
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
