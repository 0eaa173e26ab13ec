import Foundation

/// A prefetch job as the server reports it (docs/API.md, "Prefetch").
public struct ThumbdPrefetchJob: Codable, Sendable, Equatable {
    /// `running`, or one of the final states.
    public enum State: String, Codable, Sendable {
        case running, done, cancelled
    }

    /// The server's id (each node's own in a cluster).
    public var id: Int
    public var grid: ThumbdGrid
    public var state: State
    /// Items in the job (a range clamped to the listing).
    public var total: Int
    /// Rendered and kept by a cache tier.
    public var done: Int
    /// Already cached.
    public var skipped: Int
    /// Missing or undecodable.
    public var failed: Int
    /// Rendered but kept by no tier (a full disk...).
    public var notStored: Int
    /// Dropped by a stop.
    public var cancelled: Int
    /// Why the latest item was not stored; nil while none was.
    public var notStoredReason: String?

    enum CodingKeys: String, CodingKey {
        case id, grid, state, total, done, skipped, failed, cancelled
        case notStored = "not_stored", notStoredReason = "not_stored_reason"
    }
}

/// Warming the server's cache ahead of a grid, in the shape of `PHCachingImageManager`:
/// `startCaching(assets:grid:)` / `stopCaching(assets:grid:)` / `stopCachingAll()`, mapped to
/// `POST /prefetch` (with the assets' `urls`), `DELETE /prefetch/{id}` and `DELETE /prefetch`;
/// and listing ranges (`startCaching(range:…)`), which the preheat controller uses.
///
/// It keeps the bookkeeping: which of its jobs warm which assets. An asset already in one of its
/// jobs for a grid is not posted again; a job is stopped once every asset it was started for
/// has been let go. Jobs are this client's (its key, or the library's `Thumbd-Client-Id`).
public actor ThumbdCachingManager {
    nonisolated let library: ThumbdLibrary
    /// Per grid: asset id → the job warming it.
    private var jobOfAsset: [ThumbdGrid: [String: Int]] = [:]
    /// Job → the asset ids it still warms (path jobs only).
    private var assetsOfJob: [Int: Set<String>] = [:]
    /// Every job this manager started and has not stopped.
    private var started: Set<Int> = []

    public init(library: ThumbdLibrary) { self.library = library }

    /// The ids of the jobs started here and not stopped (some may have finished on the server).
    public var jobIDs: [Int] { started.sorted() }

    /// Starts warming `assets` at `grid` (those not already being warmed here for it): one
    /// `POST /prefetch` with their `urls`.
    /// - Parameters:
    ///   - assets: from the listing.
    ///   - grid: the grid the cells will ask for.
    ///   - format: warms the entries of `&format=`; nil by default (those of a request without it).
    /// - Returns: the job, nil when every asset was already being warmed.
    /// - Throws: `ThumbdError`: `.server` 429 (`too_many_jobs`, `too_many_items`, `rate_limited`,
    ///   with `retryAfter`; nothing was queued), 403 `outside_prefix`, `.unauthorized`, `.network`.
    @discardableResult
    public func startCaching(assets: [ThumbdAsset], grid: ThumbdGrid, format: ThumbdFormat? = nil) async throws -> ThumbdPrefetchJob? {
        var seen = Set<String>()
        let fresh = assets.filter { jobOfAsset[grid]?[$0.id] == nil && seen.insert($0.id).inserted }
        guard !fresh.isEmpty else { return nil }
        var body: [String: Any] = ["grid": grid.name, "urls": fresh.map(\.url)]
        if let format { body["format"] = format.rawValue }
        let job = try await post(body)
        // Another call may have claimed some of them while this one was posted: the first wins.
        var mine = Set<String>()
        for asset in fresh where jobOfAsset[grid]?[asset.id] == nil {
            jobOfAsset[grid, default: [:]][asset.id] = job.id
            mine.insert(asset.id)
        }
        assetsOfJob[job.id] = mine
        started.insert(job.id)
        return job
    }

    /// Lets `assets` go at `grid`: each job all of whose assets have been let go is stopped
    /// (`DELETE /prefetch/{id}`; its renders under way finish and stay cached).
    /// - Returns: the stopped jobs in their final state.
    /// - Throws: `ThumbdError` (`.network`...); a job the server no longer knows (404) counts as stopped.
    @discardableResult
    public func stopCaching(assets: [ThumbdAsset], grid: ThumbdGrid) async throws -> [ThumbdPrefetchJob] {
        var emptied: [Int] = []
        for asset in assets {
            guard let id = jobOfAsset[grid]?.removeValue(forKey: asset.id) else { continue }
            assetsOfJob[id]?.remove(asset.id)
            if assetsOfJob[id]?.isEmpty == true {
                assetsOfJob[id] = nil
                emptied.append(id)
            }
        }
        var stopped: [ThumbdPrefetchJob] = []
        for id in emptied {
            if let job = try await stopCaching(job: id) { stopped.append(job) }
        }
        return stopped
    }

    /// Starts warming a range of the listing: `POST /prefetch` `{"grid", "sort", "start", "end",
    /// "focus"}`.
    /// - Parameters:
    ///   - range: listing indexes, `end` exclusive (clamped by the server to the listing).
    ///   - sort: the listing's order; `.newest` by default.
    ///   - focus: the index of the first visible cell: the server warms from there on, then the
    ///     items before it, nearest first; nil: in listing order.
    ///   - grid: the grid the cells will ask for.
    /// - Throws: as `startCaching(assets:grid:format:)`; 503 `index_building` while a fresh
    ///   index is in its first scan.
    @discardableResult
    public func startCaching(range: Range<Int>, sort: ThumbdSort = .newest, focus: Int? = nil, grid: ThumbdGrid) async throws -> ThumbdPrefetchJob {
        var body: [String: Any] = ["grid": grid.name, "sort": sort.rawValue, "start": range.lowerBound, "end": range.upperBound]
        if let focus { body["focus"] = focus }
        let job = try await post(body)
        started.insert(job.id)
        return job
    }

    /// Stops one job (`DELETE /prefetch/{id}`), like `stopCachingImages` for its assets.
    /// - Returns: the job in its final state (`cancelled`, or `done` when it had finished); nil
    ///   when the server no longer knows it (404).
    /// - Throws: `ThumbdError` other than 404.
    @discardableResult
    public func stopCaching(job id: Int) async throws -> ThumbdPrefetchJob? {
        forget(job: id)
        let connection = library.connection
        do {
            return try await connection.json(ThumbdPrefetchJob.self, connection.apiRequest("DELETE", "/prefetch/\(id)"))
        } catch let error as ThumbdError where error.serverError?.status == 404 {
            return nil
        }
    }

    /// Stops every job of this client (`DELETE /prefetch`), like
    /// `stopCachingImagesForAllAssets` on a grid change, and forgets them all.
    /// - Returns: the jobs that were still running, in their final state.
    /// - Throws: `ThumbdError`.
    @discardableResult
    public func stopCachingAll() async throws -> [ThumbdPrefetchJob] {
        struct Jobs: Decodable { var jobs: [ThumbdPrefetchJob] }
        jobOfAsset = [:]
        assetsOfJob = [:]
        started = []
        let connection = library.connection
        return try await connection.json(Jobs.self, connection.apiRequest("DELETE", "/prefetch")).jobs
    }

    /// A job's progress (`GET /prefetch/{id}`).
    /// - Throws: `ThumbdError` (`.server` 404 for a job the server does not know, or another client's).
    public func job(id: Int) async throws -> ThumbdPrefetchJob {
        let connection = library.connection
        return try await connection.json(ThumbdPrefetchJob.self, connection.apiRequest("GET", "/prefetch/\(id)"))
    }

    private func forget(job id: Int) {
        started.remove(id)
        if let assets = assetsOfJob.removeValue(forKey: id) {
            for grid in jobOfAsset.keys {
                for asset in assets where jobOfAsset[grid]?[asset] == id { jobOfAsset[grid]?[asset] = nil }
            }
        }
    }

    private func post(_ body: [String: Any]) async throws -> ThumbdPrefetchJob {
        let json = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        let connection = library.connection
        return try await connection.json(ThumbdPrefetchJob.self, connection.apiRequest("POST", "/prefetch", json: json))
    }
}
