/// `GET /healthz`'s answer (docs/API.md, "Endpoints"): `{"status": "ok"}` with 200, or
/// `{"status": "degraded", "disk_cache": "<why>", "library_index": "<why>"}` with 503, each
/// reason present while its fault lasts.
struct HealthBody: Codable, Sendable, Equatable {
    /// `ok` while the server serves as configured; `degraded` while the disk cache cannot keep
    /// thumbnails as configured (its directory gone, its file system full or read-only) or the
    /// library index cannot be written to its file.
    enum Status: String, Codable, Sendable {
        case ok, degraded
    }

    /// `status`.
    var status: Status
    /// `disk_cache`: why the disk cache cannot keep thumbnails as configured (the sentence
    /// `disk_cache.fault` of `/stats` gives); absent when it is fine.
    var diskCache: String?
    /// `library_index`: why the library index cannot be written to `index.sqlite`
    /// (`LibraryIndex.writeFault`); absent when it can.
    var libraryIndex: String?

    private enum CodingKeys: String, CodingKey {
        case status, diskCache = "disk_cache", libraryIndex = "library_index"
    }
}
