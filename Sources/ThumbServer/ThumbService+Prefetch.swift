import Foundation
import HTTP
import Library
import Rendering
import Thumbnails

/// `POST /prefetch`, `GET`/`DELETE /prefetch/{id}`, `DELETE /prefetch` (docs/API.md, "Prefetch").
extension ThumbService {
    /// `POST /prefetch`: resolving thousands of paths takes a while, so the job is started off
    /// the connection's event loop.
    func startPrefetch(_ request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        DispatchQueue.global(qos: .userInitiated).async { completion(self.startPrefetch(request.body)) }
    }

    /// `DELETE /prefetch`: stops every job; 200 with their final states.
    func cancelAllPrefetches() -> HTTPResponse {
        let jobs = prefetcher.cancelAll()
        return Self.json(status: 200, "{\"jobs\":[\(jobs.map(Self.jobJSON).joined(separator: ","))]}\n")
    }

    /// The job id in what follows `/prefetch/`: a whole number above 0; nil for anything else.
    static func prefetchJobID(_ rest: Substring) -> Int? {
        guard let id = Int(rest), id > 0 else { return nil }
        return id
    }

    /// `GET`/`HEAD /prefetch/{id}` (the job), `DELETE /prefetch/{id}` (`cancel`: the job stopped);
    /// 404 for no such job.
    func respondWithPrefetchJob(_ request: HTTPRequest, cancel: Bool) -> HTTPResponse {
        let job = Self.prefetchJobID(request.path.dropFirst("/prefetch/".count)).flatMap { id in
            cancel ? prefetcher.cancel(id) : prefetcher.job(id)
        }
        guard let job else { return APIError.notFound("no such prefetch job").response }
        return Self.json(status: 200, Self.jobJSON(job) + "\n")
    }

    /// Validates the body, resolves every item, then queues the job: 202, or 400 with nothing queued.
    func startPrefetch(_ body: [UInt8]) -> HTTPResponse {
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
            paths = list
        case .range(let order, let start, let end):
            guard index.isComplete else { return APIError.indexBuilding.response }
            paths = index.listing(order: order, offset: start, limit: end - start).items.map {
                $0.path.segments.map { Array($0) }
            }
        case .following(let order, let start, let count):
            guard index.isComplete else { return APIError.indexBuilding.response }
            paths = index.page(order: order, from: start, limit: count).items.map { $0.path.segments.map { Array($0) } }
        }
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
            requests.append(ThumbnailRequest(key: cacheKey(of: asset, grid: plan.grid, format: plan.format), asset: asset))
        }
        let job = prefetcher.start(grid: plan.grid.name, requests: requests, failedUpfront: failed)
        return Self.json(status: 202, Self.jobJSON(job) + "\n")
    }

    static func jobJSON(_ job: PrefetchJob) -> String {
        "{\"id\":\(job.id),\"grid\":\(JSON.quote(job.grid)),\"state\":\"\(job.state.rawValue)\",\"total\":\(job.total),"
            + "\"done\":\(job.done),\"skipped\":\(job.skipped),\"failed\":\(job.failed),\"not_stored\":\(job.notStored),"
            + "\"cancelled\":\(job.cancelled),\"not_stored_reason\":\(job.notStoredReason.map(JSON.quote) ?? "null")}"
    }
}
