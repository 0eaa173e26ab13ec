import Foundation
import HTTP
import Library
import Rendering
import Synchronization
import Thumbnails

/// `POST /prefetch`, `GET`/`DELETE /prefetch/{id}`, `DELETE /prefetch` (docs/API.md, "Prefetch").
extension ThumbService {
    /// `POST /prefetch`: resolving thousands of paths takes a while, so the job is started off
    /// the connection's event loop.
    /// A caller that goes away before the job is queued (a node whose forward timed out, then
    /// closed its connection: this node was hung, and reads the call only now) gets none: its
    /// items were sent elsewhere meanwhile. Best effort: the close is seen on the event loop,
    /// which a busy node may reach only after the job was queued.
    func startPrefetch(_ request: HTTPRequest, for client: Client, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        do {
            try QueryParameters.check(request.query, known: [], of: "POST /prefetch")
        } catch {
            return completion(error.response)
        }
        let gone = Mutex(false)
        request.clientAbort.onAbort { gone.withLock { $0 = true } }
        DispatchQueue.global(qos: .userInitiated).async {
            let caller = self.passedHeaders(of: request)
            let partOf = caller == nil ? self.cluster?.job(named: request.headers[ClusterPrefetch.jobHeader]) : nil
            completion(self.startPrefetch(request.body, for: client, caller: caller, partOf: partOf,
                                          callerGone: { gone.withLock { $0 } }))
        }
    }

    /// Runs `work` (a job's `GET` or `DELETE`) at once on a single node; in a cluster, where it
    /// calls other nodes and waits for them, off the event loop.
    func offTheLoopInACluster(_ work: @escaping @Sendable () -> Void) {
        if cluster == nil { work() } else { DispatchQueue.global(qos: .userInitiated).async(execute: work) }
    }

    /// What a call to another node about `request`'s jobs carries of it (`ClusterPrefetch`):
    /// the caller's credentials; nil when `request` is itself a forward (it is answered here
    /// alone; its caller's peers fingerprint is checked against this node's).
    func passedHeaders(of request: HTTPRequest) -> [(String, String)]? {
        guard request.headers[ClusterPrefetch.forwardedHeader] == nil else {
            if let warning = cluster?.checkPeers(request.headers[ClusterPrefetch.peersHeader]) { Thumbd.warn(warning) }
            return nil
        }
        return ClusterPrefetch.passedHeaders.compactMap { name in request.headers[name].map { (name, $0) } }
    }

    /// `DELETE /prefetch`: stops `client`'s jobs; `DELETE /prefetch?all=true`, the admin's alone
    /// (403 `forbidden` for anyone else), every client's. 200 with their final states.
    /// `configuration`: the settings the request read (`answer`).
    func cancelPrefetches(_ request: HTTPRequest, for client: Client, _ configuration: ServiceConfiguration) -> HTTPResponse {
        do {
            try QueryParameters.check(request.query, known: QueryParameters.stopJobs, of: "DELETE /prefetch")
        } catch {
            return error.response
        }
        let all: Bool
        switch Negotiation.queryValue("all", in: request.query) {
        case nil, "false", "0": all = false
        case "true", "1": all = true
        case let value?:
            let sent = Negotiation.sentValue("all", in: request.query) ?? value
            return APIError.badRequest("all must be true or false (not \(JSON.quote(String(sent))))").response
        }
        if all && !client.isAdmin && !(configuration.adminToken.isEmpty && configuration.clientKeys.isEmpty) {
            return APIError(status: 403, code: "forbidden", message: "only the admin token may stop every client's jobs (all=true)").response
        }
        var jobs = prefetcher.cancelAll(owner: all ? nil : client.owner)
        guard let cluster else {
            return Self.json(status: 200, encoding: PrefetchJobListBody(jobs: jobs.map { Self.jobBody($0) }))
        }
        // Jobs whose own items have ended but whose parts elsewhere still run are running too.
        let stoppedHere = Set(jobs.map(\.id))
        jobs += cluster.jobsWithRunningParts.filter { !stoppedHere.contains($0) }.compactMap {
            prefetcher.job($0, owner: all ? nil : client.owner)
        }
        // A stop-all forwarded by another node: this node's jobs alone, each part naming the job
        // it belongs to, for the caller's node to list under that job's id.
        guard let caller = self.passedHeaders(of: request) else {
            let listed = jobs.map { Self.jobBody($0, partOf: cluster.coordinator(of: $0.id)) }
            return Self.json(status: 200, encoding: PrefetchJobListBody(jobs: listed))
        }
        // In a cluster the caller's jobs stop on every node, whichever started them; each is
        // listed once, under the id of the node that took its POST (the id the caller has).
        let own = jobs.filter { cluster.coordinator(of: $0.id) == nil }
        let localParts = jobs.compactMap { job in
            cluster.coordinator(of: job.id).map { ClusterPrefetch.Stopped(counts: PrefetchCounts(job), grid: job.grid, partOf: $0) }
        }
        let stopped = cluster.stopEverywhere(all: all, headers: caller)
        let listed = own.map { Self.jobBody($0, parts: cluster.fold(stopped, into: $0.id, headers: caller)) }
            + cluster.coordinatedElsewhere(stopped, localParts: localParts).map {
                PrefetchJobBody(grid: $0.grid, counts: $0.counts, notStoredReason: nil)
            }
        return Self.json(status: 200, encoding: PrefetchJobListBody(jobs: listed))
    }

    /// The job id in what follows `/prefetch/`: a whole number above 0; nil for anything else.
    static func prefetchJobID(_ rest: Substring) -> Int? {
        guard let id = Int(rest), id > 0 else { return nil }
        return id
    }

    /// `GET`/`HEAD /prefetch/{id}` (the job), `DELETE /prefetch/{id}` (`cancel`: the job stopped);
    /// 404 for no such job.
    /// A job that is not `client`'s is 404 for it, as one that does not exist (the admin sees all).
    func respondWithPrefetchJob(_ request: HTTPRequest, cancel: Bool, for client: Client) -> HTTPResponse {
        do {
            try QueryParameters.check(request.query, known: [], of: "/prefetch/{id}")
        } catch {
            return error.response
        }
        let owner = client.isAdmin ? nil : client.owner
        let job = Self.prefetchJobID(request.path.dropFirst("/prefetch/".count)).flatMap { id in
            cancel ? prefetcher.cancel(id, owner: owner) : prefetcher.job(id, owner: owner)
        }
        guard let job else { return APIError.notFound("no such prefetch job").response }
        // Its parts on other nodes: refreshed, or stopped with it.
        var parts: [ClusterPrefetch.Part] = []
        if let cluster, let caller = self.passedHeaders(of: request) {
            parts = cancel ? cluster.stopParts(of: job.id, headers: caller) : cluster.refreshedParts(of: job.id, headers: caller)
        }
        return Self.json(status: 200, encoding: Self.jobBody(job, parts: parts))
    }

    /// Validates the body, resolves every item, then queues the job: 202, or 400 with nothing queued.
    /// `client` may name only paths under its scope's folder (`LibraryScope.mayName`, else 403
    /// `outside_prefix`, judged from the text before any lookup, and nothing is queued); a path
    /// that is not in its `Client.scope` once resolved (its symlinks lead out of the folder)
    /// counts as failed, as a missing one does; a range is of the listing it sees.
    /// In a cluster, with `caller` (the credentials a forward passes on; nil for a call that is
    /// itself a forward), the items other nodes own go to them (`ClusterPrefetch.forward`); the
    /// job's `total` is all of them, and its counts add up across nodes.
    /// `partOf`: for a forward (no `caller`), the job on the forwarding node it is a part of
    /// (`ClusterPrefetch.jobHeader`), remembered for a stop-all.
    func startPrefetch(_ body: [UInt8], for client: Client = .anonymous, caller: [(String, String)]? = nil,
                       partOf: ClusterPrefetch.PartKey? = nil, callerGone: () -> Bool = { false }) -> HTTPResponse {
        let plan: PrefetchPlan
        do {
            plan = try PrefetchPlan(body: body, grids: configuration.grids, webpEnabled: configuration.webpEnabled)
        } catch {
            return error.response
        }
        var requests: [ThumbnailRequest] = []
        var failed = 0
        let paths: [[[UInt8]]]
        switch plan.items {
        case .paths(let list):
            if let outside = list.first(where: { !client.scope.mayName($0) }) {
                let path = DiskPath(bytes: outside.joined(separator: [UInt8(ascii: "/")])).description
                return APIError(status: 403, code: "outside_prefix",
                                message: "this client key may prefetch only under its folder (\(JSON.quote(path)) is not)").response
            }
            paths = list
        case .range(let order, let start, let end, let focus):
            guard index.isComplete else { return APIError.indexBuilding.response }
            let page = index.page(order: order, from: .offset(start), limit: end - start, in: client.scope).items.map {
                $0.path.segments.map { Array($0) }
            }
            paths = PrefetchPlan.ordered(page, start: start, focus: focus)
        case .following(let order, let start, let count):
            guard index.isComplete else { return APIError.indexBuilding.response }
            paths = index.page(order: order, from: start, limit: count, in: client.scope).items.map {
                $0.path.segments.map { Array($0) }
            }
        }
        requests.reserveCapacity(paths.count)
        var owned: [[UInt8]] = []   // each request's asset path, the key nginx hashes
        for segments in paths {
            let asset: ResolvedAsset
            do {
                asset = try library.resolve(names: segments)
            } catch .outsideRoot {
                let path = DiskPath(bytes: segments.joined(separator: [UInt8(ascii: "/")])).description
                return APIError.badRequest("paths must stay inside the library (\(JSON.quote(path)) "
                                           + "leads outside it)").response
            } catch {
                failed += 1   // missing, or not a file
                continue
            }
            // A link under the folder that leads out of it is as good as missing to this client.
            if !client.scope.contains(asset) {
                failed += 1
                continue
            }
            requests.append(ThumbnailRequest(key: cacheKey(of: asset, grid: plan.grid, format: plan.format), asset: asset))
            owned.append(Array(asset.assetPath.bytes))
        }
        var parts: [ClusterPrefetch.Part] = []
        var reserved: Int?
        if let cluster, let caller {
            // The per-job limit is the whole job's, checked before any node queues a part.
            if !client.isAdmin && requests.count + failed > prefetcher.limits.itemsPerJob {
                return Self.apiError(for: .tooManyItems(limit: prefetcher.limits.itemsPerJob)).response
            }
            // The job's id, taken now: each part is told it.
            let id = prefetcher.reserveID()
            reserved = id
            let split = cluster.forward(Array(zip(owned, requests)).map { (path: $0.0, item: $0.1) }, grid: plan.grid.name,
                                        format: plan.format == .automatic ? nil : plan.format.rawValue, headers: caller, job: id)
            requests = split.own
            parts = split.parts
            failed += split.refused
        }
        if callerGone() {
            if let cluster, let caller, !parts.isEmpty { _ = cluster.stop(parts, headers: caller) }
            return APIError(status: 503, code: "overloaded", message: "the caller went away before the job was queued").response
        }
        do {
            let job = try prefetcher.start(grid: plan.grid.name, owner: client.owner, limited: !client.isAdmin,
                                           requests: requests, failedUpfront: failed, id: reserved)
            if let cluster {
                cluster.remember(parts, of: job.id)
                if let partOf { cluster.remember(job.id, isPartOf: partOf) }
                cluster.forget { self.prefetcher.job($0) != nil }
            }
            return Self.json(status: 202, encoding: Self.jobBody(job, parts: parts))
        } catch {
            // Refused here: the parts already started elsewhere stop too.
            if let cluster, let caller, !parts.isEmpty { _ = cluster.stop(parts, headers: caller) }
            return Self.apiError(for: error).response
        }
    }

    /// 429 with `Retry-After` (RFC 6585 §4) for a job past a per-client limit (`PrefetchLimits`).
    static func apiError(for refusal: PrefetchRefusal) -> APIError {
        switch refusal {
        case .tooManyJobs(let limit):
            APIError(status: 429, code: "too_many_jobs", message: "this client has \(limit) prefetch jobs running "
                     + "(prefetch_client_jobs); stop one or wait for one to end", headers: ["Retry-After": "1"])
        case .tooManyItems(let limit):
            APIError(status: 429, code: "too_many_items", message: "a prefetch job may name at most \(limit) items "
                     + "(prefetch_client_items_per_job); split it", headers: ["Retry-After": "1"])
        case .rateLimited(let limit, let seconds):
            APIError(status: 429, code: "rate_limited", message: "this client's prefetch jobs named \(limit) items in the "
                     + "last minute (prefetch_client_items_per_minute); retry in \(seconds) s", headers: ["Retry-After": String(seconds)])
        }
    }

    /// The job body of `job` with its `parts` on other nodes added (docs/API.md, "Prefetch").
    /// `partOf` (only in a node's answer to another node's stop-all): the job on another node
    /// it is a part of (`part_of`).
    static func jobBody(_ job: PrefetchJob, parts: [ClusterPrefetch.Part] = [], partOf: ClusterPrefetch.PartKey? = nil) -> PrefetchJobBody {
        PrefetchJobBody(grid: job.grid, counts: PrefetchCounts(job).adding(parts.map(\.counts)),
                        notStoredReason: job.notStoredReason, partOf: partOf)
    }
}
