/// `DELETE /prefetch` across the cluster: the jobs the other nodes stopped, and the caller's jobs
/// listed under the ids the caller knows, each its coordinating node's (the node its `POST`
/// reached), never a part's id on another node.
extension ClusterPrefetch {
    /// One job a node stopped, as its answer to a forwarded `DELETE /prefetch` gives it: its
    /// counts (its own items only), its grid, and the job it is a part of (`part_of`; nil: that
    /// node coordinates it).
    struct Stopped: Sendable, Equatable {
        var counts: PrefetchCounts
        var grid: String
        var partOf: PartKey?

        init(counts: PrefetchCounts, grid: String, partOf: PartKey?) {
            self.counts = counts
            self.grid = grid
            self.partOf = partOf
        }

        /// A job as a node's answer lists it.
        init(_ job: PrefetchJobBody) {
            self.init(counts: job.counts, grid: job.grid, partOf: job.partOf)
        }
    }

    /// The jobs other nodes coordinate, each under its coordinating node's id with the counts
    /// of its items there and of its parts added: parts on the other nodes (`stopped`) and here
    /// (`localParts`, the jobs stopped here that are parts of another node's). A job whose node
    /// did not answer is listed with its parts' counts alone. Parts of this node's own jobs are
    /// left out (`fold` adds them to those). Ordered by node, then id.
    func coordinatedElsewhere(_ stopped: [PartKey: Stopped], localParts: [Stopped]) -> [(id: Int, grid: String, counts: PrefetchCounts)] {
        var byJob: [PartKey: (grid: String, own: PrefetchCounts?, parts: [PrefetchCounts])] = [:]
        let entries = stopped.map { key, job in (job: job.partOf ?? key, stopped: job) } + localParts.compactMap { job in
            job.partOf.map { (job: $0, stopped: job) }
        }
        for (key, job) in entries where key.peer != settings.node {
            var group = byJob[key] ?? (job.grid, nil, [])
            if job.partOf == nil { group.own = job.counts } else { group.parts.append(job.counts) }
            byJob[key] = group
        }
        return byJob.sorted { ($0.key.peer, $0.key.id) < ($1.key.peer, $1.key.id) }.map { key, group in
            var counts = group.own.map { $0.adding(group.parts) } ?? group.parts[0].adding(Array(group.parts.dropFirst()))
            counts.id = key.id
            return (key.id, group.grid, counts)
        }
    }
}
