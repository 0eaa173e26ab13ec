/// `GET /stats` (docs/stats.md): the figures a client watches, decoded from the server's JSON
/// (other fields are left out; docs/API.md, "Stats", lists them all).
public struct ThumbdStats: Codable, Sendable, Equatable {
    /// Since the server started, s (one decimal).
    public var uptimeSeconds: Double
    public var requests: Requests
    public var memoryCache: Cache
    public var diskCache: Cache
    public var renders: Renders
    public var prefetch: Prefetch
    public var library: Library
    public var placeholders: Placeholders
    public var connections: Connections

    enum CodingKeys: String, CodingKey {
        case uptimeSeconds = "uptime_seconds", requests, memoryCache = "memory_cache", diskCache = "disk_cache"
        case renders, prefetch, library, placeholders, connections
    }

    /// Requests answered since start.
    public struct Requests: Codable, Sendable, Equatable {
        public var total: Int
        /// Status code (`"200"`, `"304"`; `"499"` for a client that went away before its
        /// answer) → count.
        public var byStatus: [String: Int]
        enum CodingKeys: String, CodingKey { case total, byStatus = "by_status" }

        /// The count of `status`, 0 when none was answered.
        public subscript(status: Int) -> Int { byStatus[String(status)] ?? 0 }
    }

    /// The memory or the disk tier.
    public struct Cache: Codable, Sendable, Equatable {
        public var entries: Int
        /// Bytes held.
        public var bytes: Int
        public var limitBytes: Int
        public var hits: Int
        public var misses: Int
        public var evictions: Int
        enum CodingKeys: String, CodingKey { case entries, bytes, limitBytes = "limit_bytes", hits, misses, evictions }
    }

    /// Renders (libvips).
    public struct Renders: Codable, Sendable, Equatable {
        /// Renders run (coalesced waiters not counted again).
        public var total: Int
        public var failed: Int
        /// Requests that joined a render under way.
        public var coalesced: Int
        public var inFlight: Int
        public var queued: Int
        /// Of `total`, those run for prefetch jobs.
        public var prefetch: Int
        /// Of `total`, those made from a cached larger grid.
        public var derived: Int
        /// Renders dropped before they started because every client waiting went away.
        public var abandoned: Int
        /// Render time percentiles, ms.
        public var latencyMilliseconds: Latency
        enum CodingKeys: String, CodingKey {
            case total, failed, coalesced, inFlight = "in_flight", queued, prefetch, derived, abandoned
            case latencyMilliseconds = "latency_ms"
        }

        public struct Latency: Codable, Sendable, Equatable {
            public var p50: Double
            public var p95: Double
            public var p99: Double
        }
    }

    /// Prefetch jobs, all clients'.
    public struct Prefetch: Codable, Sendable, Equatable {
        /// Jobs running now.
        public var jobs: Int
        /// Items waiting for a render worker.
        public var queued: Int
        public var done: Int
        public var skipped: Int
        public var failed: Int
        public var cancelled: Int
        /// Jobs refused with 429, by limit.
        public var refused: Refused
        public struct Refused: Codable, Sendable, Equatable {
            public var tooManyJobs: Int
            public var tooManyItems: Int
            public var rateLimited: Int
            enum CodingKeys: String, CodingKey {
                case tooManyJobs = "too_many_jobs", tooManyItems = "too_many_items", rateLimited = "rate_limited"
            }
        }
    }

    /// The listing.
    public struct Library: Codable, Sendable, Equatable {
        /// Assets listed.
        public var assets: Int
        /// The listing's `generation`.
        public var generation: Int
    }

    /// ThumbHash placeholders of the listing.
    public struct Placeholders: Codable, Sendable, Equatable {
        /// Listed images with a `thumbhash`.
        public var known: Int
        /// Listed images without one yet.
        public var missing: Int
    }

    /// Client connections.
    public struct Connections: Codable, Sendable, Equatable {
        public var open: Int
        public var total: Int
    }
}
