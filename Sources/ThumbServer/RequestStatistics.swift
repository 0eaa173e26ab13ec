import Dispatch
import HTTP
import Synchronization

/// Request counters for `/stats` (`requests`) and the Prometheus request metrics, fed by the
/// server's `onExchange` hook so that every response is counted once, parser errors included.
/// Thread-safe: one `Mutex`.
public final class RequestStatistics: Sendable {
    public struct Snapshot: Sendable {
        public var total = 0
        public var byStatus: [Int: Int] = [:]
        /// Request durations: cumulative counts per bucket of `bucketBounds` (seconds), and sum.
        public var durationBuckets: [Int] = Array(repeating: 0, count: RequestStatistics.bucketBounds.count)
        public var durationSumSeconds = 0.0
    }

    /// Upper bounds of the request-duration histogram buckets, seconds.
    public static let bucketBounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let state = Mutex(Snapshot())
    /// When the server started (`uptime_seconds`).
    public let startedAt = DispatchTime.now()

    public init() {}

    /// Counts one finished exchange.
    public func record(_ exchange: HTTPExchangeRecord) {
        let seconds = Double(exchange.durationNanoseconds) / 1e9
        state.withLock { s in
            s.total += 1
            s.byStatus[exchange.status, default: 0] += 1
            s.durationSumSeconds += seconds
            for (i, bound) in Self.bucketBounds.enumerated() where seconds <= bound { s.durationBuckets[i] += 1 }
        }
    }

    public var snapshot: Snapshot { state.withLock { $0 } }

    public var uptimeSeconds: Double { Double(DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1e9 }
}
