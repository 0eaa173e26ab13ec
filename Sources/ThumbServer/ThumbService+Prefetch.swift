import Foundation
import HTTP
import Library
import Rendering
import Thumbnails

/// `POST /prefetch`, `GET`/`DELETE /prefetch/{id}`, `DELETE /prefetch` (docs/API.md, "Prefetch").
extension ThumbService {
    /// `POST /prefetch`: resolving thousands of paths takes a while, so the job is started off
    /// the connection's event loop.
    func startPrefetch(_ request: HTTPRequest, for client: Client, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        DispatchQueue.global(qos: .userInitiated).async { completion(self.startPrefetch(request.body, for: client)) }
    }

    /// `DELETE /prefetch`: stops `client`'s jobs; `DELETE /prefetch?all=true`, the admin's alone
    /// (403 `forbidden` for anyone else), every client's. 200 with their final states.
    func cancelPrefetches(_ request: HTTPRequest, for client: Client) -> HTTPResponse {
        let all = Negotiation.queryValue("all", in: request.query).map { $0 == "true" || $0 == "1" } ?? false
        if all && !client.isAdmin && !(configuration.adminToken.isEmpty && configuration.clientKeys.isEmpty) {
            return APIError(status: 403, code: "forbidden", message: "only the admin token may stop every client's jobs (all=true)").response
        }
        let jobs = prefetcher.cancelAll(owner: all ? nil : client.owner)
        return Self.json(status: 200, "{\"jobs\":[\(jobs.map(Self.jobJSON).joined(separator: ","))]}\n")
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
        let owner = client.isAdmin ? nil : client.owner
        let job = Self.prefetchJobID(request.path.dropFirst("/prefetch/".count)).flatMap { id in
            cancel ? prefetcher.cancel(id, owner: owner) : prefetcher.job(id, owner: owner)
        }
        guard let job else { return APIError.notFound("no such prefetch job").response }
        return Self.json(status: 200, Self.jobJSON(job) + "\n")
    }

    /// Validates the body, resolves every item, then queues the job: 202, or 400 with nothing queued.
    /// `client` may name only paths under its `Client.prefix` (else 403 `outside_prefix`, judged
    /// from the text before any lookup, and nothing is queued); a path whose symlinks lead out of
    /// it counts as failed, as a missing one does; a range is of the listing it sees.
    func startPrefetch(_ body: [UInt8], for client: Client = .anonymous) -> HTTPResponse {
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
            if let outside = list.first(where: { !client.sees($0) }) {
                let path = DiskPath(bytes: outside.joined(separator: [UInt8(ascii: "/")])).description
                return APIError(status: 403, code: "outside_prefix",
                                message: "this client key may prefetch only under its folder (\(JSON.quote(path)) is not)").response
            }
            paths = list
        case .range(let order, let start, let end):
            guard index.isComplete else { return APIError.indexBuilding.response }
            paths = index.page(order: order, from: .offset(start), limit: end - start, under: client.prefixBytes).items.map {
                $0.path.segments.map { Array($0) }
            }
        case .following(let order, let start, let count):
            guard index.isComplete else { return APIError.indexBuilding.response }
            paths = index.page(order: order, from: start, limit: count, under: client.prefixBytes).items.map {
                $0.path.segments.map { Array($0) }
            }
        }
        let scope = client.prefix.isEmpty ? [] : Array(library.root.utf8) + [UInt8(ascii: "/")] + client.prefixBytes
        requests.reserveCapacity(paths.count)
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
            if !scope.isEmpty && !asset.absolutePath.bytes.starts(with: scope) {
                failed += 1
                continue
            }
            requests.append(ThumbnailRequest(key: cacheKey(of: asset, grid: plan.grid, format: plan.format), asset: asset))
        }
        do {
            let job = try prefetcher.start(grid: plan.grid.name, owner: client.owner, limited: !client.isAdmin,
                                           requests: requests, failedUpfront: failed)
            return Self.json(status: 202, Self.jobJSON(job) + "\n")
        } catch {
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

    static func jobJSON(_ job: PrefetchJob) -> String {
        "{\"id\":\(job.id),\"grid\":\(JSON.quote(job.grid)),\"state\":\"\(job.state.rawValue)\",\"total\":\(job.total),"
            + "\"done\":\(job.done),\"skipped\":\(job.skipped),\"failed\":\(job.failed),\"not_stored\":\(job.notStored),"
            + "\"cancelled\":\(job.cancelled),\"not_stored_reason\":\(job.notStoredReason.map(JSON.quote) ?? "null")}"
    }
}
