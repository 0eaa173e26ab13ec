/// `GET /healthz`'s answer (docs/API.md, "Endpoints"): `{"status": "ok"}` with 200, or
/// `{"status": "degraded", "disk_cache": "<why>"}` with 503.
struct HealthBody: Codable, Sendable, Equatable {
    /// `ok` while the server serves as configured; `degraded` while the disk cache cannot keep
    /// thumbnails as configured (its directory gone, its file system full or read-only).
    enum Status: String, Codable, Sendable {
        case ok, degraded
    }

    /// `status`.
    var status: Status
    /// `disk_cache`: why the disk cache cannot keep thumbnails as configured (the sentence
    /// `disk_cache.fault` of `/stats` gives); absent when it is fine.
    var diskCache: String?

    private enum CodingKeys: String, CodingKey {
        case status, diskCache = "disk_cache"
    }
}
