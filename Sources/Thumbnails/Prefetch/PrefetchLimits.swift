/// How much prefetch one client may ask for (docs/API.md, "Prefetch"; `prefetch_client_*`): a
/// request beyond a limit is refused with 429 and `Retry-After`, and nothing is queued. The
/// admin is not limited. Each limit is off at 0.
public struct PrefetchLimits: Sendable, Equatable {
    /// Running jobs one client may have at once (`prefetch_client_jobs`). `32` by default: the
    /// gallery's preheat keeps about six.
    public var concurrentJobs = 32
    /// Items one job may name (`prefetch_client_items_per_job`), counted after a range is
    /// clamped to the listing. `10000` by default.
    public var itemsPerJob = 10_000
    /// Items one client's jobs may name per minute (`prefetch_client_items_per_minute`), as a
    /// token bucket that holds a minute's worth and refills evenly: a client may ask for this
    /// many at once, then for one per `60 / itemsPerMinute` s. `60000` by default.
    public var itemsPerMinute = 60_000

    public init(concurrentJobs: Int = 32, itemsPerJob: Int = 10_000, itemsPerMinute: Int = 60_000) {
        self.concurrentJobs = concurrentJobs
        self.itemsPerJob = itemsPerJob
        self.itemsPerMinute = itemsPerMinute
    }

    /// No limit at all.
    public static let none = PrefetchLimits(concurrentJobs: 0, itemsPerJob: 0, itemsPerMinute: 0)

    /// The most items one job may name: `itemsPerJob`, and no more than the bucket holds.
    var itemsPerJobCap: Int? {
        let caps = [itemsPerJob, itemsPerMinute].filter { $0 > 0 }
        return caps.min()
    }
}

/// Why `Prefetcher.start` refused a job (429 with `Retry-After`; `/metrics` counts each outcome).
public enum PrefetchRefusal: Error, Sendable, Equatable {
    /// The client has `limit` jobs running already: one must end or be stopped first.
    case tooManyJobs(limit: Int)
    /// The job names more than `limit` items: split it.
    case tooManyItems(limit: Int)
    /// The client's jobs named their `limit` items per minute already: this job's items fit in
    /// `retryAfterSeconds` s.
    case rateLimited(limit: Int, retryAfterSeconds: Int)

    /// The outcome's name in `/stats` and `/metrics`.
    public var outcome: String {
        switch self {
        case .tooManyJobs: "too_many_jobs"
        case .tooManyItems: "too_many_items"
        case .rateLimited: "rate_limited"
        }
    }
}

/// Per-client prefetch admission (`PrefetchLimits`): each client's running and admitted jobs and
/// its token bucket. Not thread-safe: `Prefetcher` keeps it behind its one lock.
struct PrefetchAdmission {
    private struct Bucket {
        var tokens: Double
        var updated: Double
        /// Jobs admitted and not yet ended.
        var jobs = 0
    }

    /// Clients remembered at most before idle ones (no job, a full bucket) are forgotten, so that
    /// made-up client ids cannot grow this without bound.
    static let rememberedClients = 4096

    private var buckets: [String: Bucket] = [:]

    /// Admits a job of `items` for `owner` at `now` (seconds, monotonic), or says why not. An
    /// admitted job counts against `owner` until `ended(owner:)`.
    mutating func admit(owner: String, items: Int, limits: PrefetchLimits, now: Double) -> PrefetchRefusal? {
        if let cap = limits.itemsPerJobCap, items > cap { return .tooManyItems(limit: cap) }
        var bucket = buckets[owner] ?? Bucket(tokens: Double(limits.itemsPerMinute), updated: now)
        if limits.concurrentJobs > 0, bucket.jobs >= limits.concurrentJobs { return .tooManyJobs(limit: limits.concurrentJobs) }
        if limits.itemsPerMinute > 0 {
            let rate = Double(limits.itemsPerMinute) / 60
            bucket.tokens = min(Double(limits.itemsPerMinute), bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            if Double(items) > bucket.tokens {
                buckets[owner] = bucket
                let wait = (Double(items) - bucket.tokens) / rate
                return .rateLimited(limit: limits.itemsPerMinute, retryAfterSeconds: max(1, Int(wait.rounded(.up))))
            }
            bucket.tokens -= Double(items)
        }
        bucket.jobs += 1
        if buckets.count >= Self.rememberedClients { forgetIdle(limits: limits, now: now) }
        buckets[owner] = bucket
        return nil
    }

    /// A job of `owner`'s admitted earlier has ended (done or stopped).
    mutating func ended(owner: String) {
        buckets[owner]?.jobs -= 1
    }

    /// Running jobs of `owner`'s.
    func jobs(of owner: String) -> Int { buckets[owner]?.jobs ?? 0 }

    private mutating func forgetIdle(limits: PrefetchLimits, now: Double) {
        let rate = Double(limits.itemsPerMinute) / 60
        buckets = buckets.filter { _, bucket in
            bucket.jobs > 0 || bucket.tokens + (now - bucket.updated) * rate < Double(limits.itemsPerMinute)
        }
    }
}
