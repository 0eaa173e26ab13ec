import Dispatch

/// Where the pipeline and its scheduler read the time: a monotonic uptime in nanoseconds, as
/// `DispatchTime.uptimeNanoseconds` counts it (deadline timers are armed on that same scale).
/// Injected so that the state machines' tests pass time by hand (`ManualClock` in TestSupport).
public protocol UptimeClock: Sendable {
    /// Now, ns since boot (not counting suspend).
    func now() -> UInt64
}

/// The system's uptime clock (`DispatchTime.now()`).
public struct SystemUptimeClock: UptimeClock {
    public init() {}
    public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

extension UptimeClock {
    /// The time from now to `deadline` (uptime ns) on this clock, none when it has passed: what
    /// a Dispatch timer or a timed wait is given, so that a test's clock never makes one fire at
    /// once, again and again.
    func interval(until deadline: UInt64) -> DispatchTimeInterval {
        .nanoseconds(Int(min(deadline &- min(deadline, now()), UInt64(Int.max))))
    }
}
