/// `DELETE /prefetch`'s answer, `{"jobs": [...]}` (docs/API.md, "Prefetch"): the jobs it
/// stopped, each in its final state; and what a node reads of another node's answer to a
/// forwarded stop-all (`ClusterPrefetch.stopEverywhere`).
struct PrefetchJobListBody: Codable, Sendable, Equatable {
    /// `jobs`: each job stopped, as `GET /prefetch/{id}` gives it (in a cluster, each listed
    /// once, under the id its `POST` answered with).
    var jobs: [PrefetchJobBody]
}
