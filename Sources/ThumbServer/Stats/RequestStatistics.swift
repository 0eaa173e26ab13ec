import Dispatch
import HTTP
import Synchronization

/// Request counters for `/stats` (`requests`) and the Prometheus request metrics, fed by the
/// server's `onExchange` hook so that every response is counted once, parser errors included.
/// Thread-safe: one `Mutex` per shard; an exchange is counted in the shard of the event loop
/// that served it (`HTTPExchangeRecord.loopIndex`), so the loops never wait on one lock or pass
/// its cache line back and forth; a snapshot adds the shards up.
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

    /// What `record` updates: counts per status code 100...599 in a flat array, and the
    /// histogram's per-bucket (not yet cumulative) counts with the bounds in ns, so a request
    /// costs no hashing and no floating point.
    private struct Counters {
        var total = 0
        var byStatus = [Int](repeating: 0, count: 500)
        var buckets = [Int](repeating: 0, count: RequestStatistics.bucketBounds.count)
        var sumNanoseconds: UInt64 = 0
    }

    private static let boundsNanoseconds = bucketBounds.map { UInt64(($0 * 1e9).rounded()) }
    /// A shard's counters, in an object of its own (its own cache lines).
    private final class Shard: Sendable {
        let state = Mutex(Counters())
    }
    private let shards: [Shard]
    /// When the server started (`uptime_seconds`).
    public let startedAt = DispatchTime.now()

    /// - Parameter shards: counter sets, one per event loop (`1` by default).
    public init(shards: Int = 1) {
        self.shards = (0..<max(1, shards)).map { _ in Shard() }
    }

    /// Counts one finished exchange (a status outside 100...599 counts as the 500 it was sent as).
    public func record(_ exchange: HTTPExchangeRecord) {
        let ns = exchange.durationNanoseconds
        let status = (100...599).contains(exchange.status) ? exchange.status : 500
        let bucket = Self.boundsNanoseconds.firstIndex { ns <= $0 }
        shards[exchange.loopIndex % shards.count].state.withLock { s in
            s.total += 1
            s.byStatus[status - 100] += 1
            s.sumNanoseconds &+= ns
            if let bucket { s.buckets[bucket] += 1 }
        }
    }

    public var snapshot: Snapshot {
        var c = Counters()
        for shard in shards {
            let part = shard.state.withLock { $0 }
            c.total += part.total
            for i in c.byStatus.indices { c.byStatus[i] += part.byStatus[i] }
            for i in c.buckets.indices { c.buckets[i] += part.buckets[i] }
            c.sumNanoseconds &+= part.sumNanoseconds
        }
        var snapshot = Snapshot()
        snapshot.total = c.total
        for (i, n) in c.byStatus.enumerated() where n > 0 { snapshot.byStatus[100 + i] = n }
        var cumulative = 0
        for (i, n) in c.buckets.enumerated() {
            cumulative += n
            snapshot.durationBuckets[i] = cumulative
        }
        snapshot.durationSumSeconds = Double(c.sumNanoseconds) / 1e9
        return snapshot
    }

    public var uptimeSeconds: Double { Double(DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1e9 }
}
