import HTTP
import Thumbnails
import Locking

/// `GET /healthz` (docs/API.md, "Endpoints"): whether the server serves as configured.
extension ThumbService {
    /// `200 {"status":"ok"}`, or `503 {"status":"degraded","disk_cache":"<why>"}` (`HealthBody`) while the disk
    /// cache cannot keep thumbnails as configured: its directory was removed and cannot be made
    /// again, its file system is full (its limit lowered to what fits) or read-only
    /// (`ThumbnailPipeline.checkDiskCache`, which first tries to make the directory again and
    /// probes the file system, so the answer is mended as soon as they are); and
    /// `"library_index":"<why>"` while the index's last write to `index.sqlite` failed
    /// (`LibraryIndex.checkWrites`, which first tries a write). Thumbnails are
    /// still served then, from memory or rendered again, so the instance is not what it was
    /// configured to be: a probe that acts on the status (a load balancer, an orchestrator's
    /// restart) should see it. Blocks on file I/O: call it off the event loops.
    /// In a cluster, the answer to another node's probe (`request` marked `Thumbd-Forwarded`)
    /// carries `Thumbd-Thumbnail-Request-Age`: ms since this node last received a thumbnail
    /// request (absent when none since it started), which tells the prober that nginx routes
    /// to it again (`PeerHealth`, rule 3).
    func healthResponse(to request: HTTPRequest? = nil) -> HTTPResponse {
        ThreadRole.assertNot(.eventLoop, "healthResponse blocks on file I/O")
        var response: HTTPResponse
        let diskCache = pipeline.checkDiskCache(), libraryIndex = index.checkWrites()
        if diskCache != nil || libraryIndex != nil {
            response = Self.json(status: 503, encoding: HealthBody(status: .degraded, diskCache: diskCache, libraryIndex: libraryIndex))
        } else {
            response = Self.json(status: 200, encoding: HealthBody(status: .ok))
        }
        if let cluster, let request, request.headers[ClusterPrefetch.forwardedHeader] != nil,
           let age = cluster.thumbnailRequestAgeMilliseconds() {
            response.headers.add(ClusterPrefetch.thumbnailRequestAgeHeader, String(age))
        }
        return response
    }
}
