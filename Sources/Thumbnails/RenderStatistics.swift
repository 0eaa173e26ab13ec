import Synchronization

/// Render counters and a window of recent render durations for `/stats` (`renders`).
/// Thread-safe: one `Mutex`.
public final class RenderStatistics: Sendable {
    /// A snapshot.
    public struct Snapshot: Sendable, Equatable {
        /// libvips renders actually run (client and prefetch), failed ones included.
        public var total = 0
        public var failed = 0
        /// Client requests that joined a lookup or render already in flight instead of starting one.
        public var coalesced = 0
        /// Renders started for prefetch jobs (included in `total`).
        public var prefetch = 0
        /// Renders made from a cached larger grid of the same source, not from the source
        /// (included in `total`; `ThumbnailPipeline.derivationDonor`).
        public var derived = 0
        /// Derived renders that failed (a donor libvips could not read), each then made from the
        /// source instead: a handled failure, counted (not in `total` beyond the source render).
        public var deriveFallbacks = 0
        /// Successful renders of a damaged JPEG, made of what decodes with the rest filled grey
        /// (`Thumbnail.degraded`; included in `total`, not in `failed`).
        public var degraded = 0
        /// Client misses refused with 503 because the render queue was full (no render ran).
        public var refused = 0
        /// Client misses answered with a failure remembered for their source (415 or 422 that
        /// the unchanged file gave before; `KnownFailures`): no render ran.
        public var knownFailures = 0
        /// Client renders dropped before they started because every client waiting for them
        /// had gone away (`ThumbnailPipeline.abandon`): no render ran.
        public var abandoned = 0
        /// Render duration percentiles over the last `window` renders, ms.
        public var p50Milliseconds = 0.0
        public var p95Milliseconds = 0.0
        public var p99Milliseconds = 0.0
        /// Every successful render's duration, for the Prometheus histogram: counts per bucket of
        /// `RenderStatistics.bucketBounds` (seconds), cumulative, and their sum in seconds.
        public var durationBuckets: [Int] = []
        public var durationSumSeconds = 0.0
    }

    /// Upper bounds of the render-duration histogram buckets, seconds.
    public static let bucketBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// How many recent durations the percentiles are computed over.
    public static let window = 1024

    private struct State {
        var snapshot = Snapshot(durationBuckets: Array(repeating: 0, count: RenderStatistics.bucketBounds.count))
        var recent: [Double] = []
        var next = 0
    }

    private let state = Mutex(State())

    public init() {}

    func recordDeriveFallback() {
        state.withLock { $0.snapshot.deriveFallbacks += 1 }
    }

    func recordRender(milliseconds: Double, failed: Bool, prefetch: Bool, derived: Bool = false, degraded: Bool = false) {
        state.withLock { s in
            s.snapshot.total += 1
            if prefetch { s.snapshot.prefetch += 1 }
            if derived { s.snapshot.derived += 1 }
            if degraded { s.snapshot.degraded += 1 }
            if failed { s.snapshot.failed += 1; return }
            if s.recent.count < Self.window { s.recent.append(milliseconds) } else { s.recent[s.next] = milliseconds }
            s.next = (s.next + 1) % Self.window
            let seconds = milliseconds / 1000
            s.snapshot.durationSumSeconds += seconds
            for (i, bound) in Self.bucketBounds.enumerated() where seconds <= bound { s.snapshot.durationBuckets[i] += 1 }
        }
    }

    func recordRefused() {
        state.withLock { $0.snapshot.refused += 1 }
    }

    func recordKnownFailure() {
        state.withLock { $0.snapshot.knownFailures += 1 }
    }

    func recordAbandoned() {
        state.withLock { $0.snapshot.abandoned += 1 }
    }

    func recordCoalesced() {
        state.withLock { $0.snapshot.coalesced += 1 }
    }

    public var snapshot: Snapshot {
        let (snapshot, recent) = state.withLock { ($0.snapshot, $0.recent) }
        var result = snapshot
        let sorted = recent.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
        }
        result.p50Milliseconds = percentile(0.50)
        result.p95Milliseconds = percentile(0.95)
        result.p99Milliseconds = percentile(0.99)
        return result
    }
}
