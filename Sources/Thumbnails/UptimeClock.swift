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
