import Foundation
import HTTP
import Rendering
import Thumbnails

/// `POST /prefetch`, `GET`/`DELETE /prefetch/{id}`, `DELETE /prefetch` (API.md, "Prefetch").
extension ThumbService {
    func respondWithPrefetch(to request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        let path = request.path
        if path == "/prefetch" {
            switch request.method {
            case "POST":
                // Resolving thousands of paths takes a while: off the connection's event loop.
                DispatchQueue.global(qos: .userInitiated).async { completion(self.startPrefetch(request.body)) }
            case "DELETE":
                let jobs = prefetcher.cancelAll()
                completion(Self.json(status: 200, "{\"jobs\":[\(jobs.map(Self.jobJSON).joined(separator: ","))]}\n"))
            default:
                completion(APIError.methodNotAllowed("POST, DELETE").response)
            }
            return
        }
        guard let id = Int(path.dropFirst("/prefetch/".count)), id > 0 else {
            return completion(APIError.notFound("no such prefetch job").response)
        }
        let job: PrefetchJob?
        switch request.method {
        case "GET", "HEAD": job = prefetcher.job(id)
        case "DELETE": job = prefetcher.cancel(id)
        default: return completion(APIError.methodNotAllowed("GET, HEAD, DELETE").response)
        }
        guard let job else { return completion(APIError.notFound("no such prefetch job").response) }
        completion(Self.json(status: 200, Self.jobJSON(job) + "\n"))
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
            + "\"done\":\(job.done),\"skipped\":\(job.skipped),\"failed\":\(job.failed),\"cancelled\":\(job.cancelled)}"
    }
}
