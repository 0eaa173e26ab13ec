import HTTP
import Thumbnails
import Locking

/// `GET /healthz` (docs/API.md, "Endpoints"): whether the server serves as configured.
extension ThumbService {
    /// `200 {"status":"ok"}`, or `503 {"status":"degraded","disk_cache":"<why>"}` while the disk
    /// cache cannot keep thumbnails because its directory was removed and cannot be made again
    /// (`ThumbnailPipeline.checkDiskCache`, which first tries to make it again). Thumbnails are
    /// still served then, each rendered again, so the instance is not what it was configured to
    /// be: a probe that acts on the status (a load balancer, an orchestrator's restart) should
    /// see it. A disk that is full or read-only is not a fault here (`disk_cache.write_errors`
    /// counts it). Blocks on file I/O: call it off the event loops.
    func healthResponse() -> HTTPResponse {
        ThreadRole.assertNot(.eventLoop, "healthResponse blocks on file I/O")
        guard let fault = pipeline.checkDiskCache() else { return Self.json(status: 200, "{\"status\":\"ok\"}\n") }
        return Self.json(status: 503, "{\"status\":\"degraded\",\"disk_cache\":\(JSON.quote(fault))}\n")
    }
}
