import Dispatch
import Foundation
import Rendering
import Synchronization

/// Each client's own deadline on a flight (`render_timeout_seconds`): the timer that answers
/// the waiters past theirs with 503 while the render goes on for the rest.
extension ThumbnailPipeline {
    /// When a client that starts waiting now stops waiting (uptime ns): `renderDeadlineSeconds`
    /// from now, or never when that is 0.
    func waitingDeadline() -> UInt64 {
        let seconds = configuration.renderDeadlineSeconds
        guard seconds > 0 else { return .max }
        return DispatchTime.now().uptimeNanoseconds &+ UInt64(min(seconds, 1e6) * 1e9)
    }

    /// With the flights lock held: arms the flight's timer for `waiter` unless one is armed
    /// (it re-arms itself for later waiters when it fires). Returns what to schedule.
    static func armIfNeeded(_ flight: inout Flight, for waiter: Waiter) -> (id: UInt64, at: UInt64)? {
        guard flight.timerDeadline == nil, waiter.deadline != .max else { return nil }
        flight.timerDeadline = waiter.deadline
        return (flight.id, waiter.deadline)
    }

    func scheduleExpiry(_ digest: String, flight id: UInt64, at deadline: UInt64) {
        diskQueue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: deadline)) { self.expire(digest, flight: id) }
    }

    /// Fails, with 503, the waiters of flight `id` whose own deadline has passed; each client
    /// gets its full `renderDeadlineSeconds` from when it started waiting. The flight stays, so
    /// the render (when it ends) still stores its result; requests meanwhile join it afresh. A
    /// timer for a flight that has ended does nothing.
    func expire(_ digest: String, flight id: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        var next: UInt64?
        let expired = flights.withLock { flights -> [Waiter] in
            guard var flight = flights[digest], flight.id == id, flight.outcome == nil else { return [] }
            let expired = flight.waiters.filter { $0.deadline <= now }
            flight.waiters.removeAll { $0.deadline <= now }
            if !expired.isEmpty { flight.stillWanted = true }
            let earliest = flight.waiters.map(\.deadline).min()
            flight.timerDeadline = earliest == .max ? nil : earliest
            next = flight.timerDeadline
            flights[digest] = flight
            return expired
        }
        if let next { scheduleExpiry(digest, flight: id, at: next) }
        for waiter in expired { waiter.completion(.failure(.deadlineExceeded)) }
    }
}
