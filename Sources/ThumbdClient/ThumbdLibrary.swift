import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A thumbd library, as an app's photo grid sees it (like `PHPhotoLibrary` with `PHAsset`
/// fetches): the listing by cursor, a whole fetch result, its changes, and `/stats`.
///
/// Every call goes to `baseURL` (the server's root) with the client key, when given, as
/// `Authorization: Bearer`, and `Thumbd-Client-Id` (which names this client's prefetch jobs on a
/// server without client keys). Make one per server and share it: it is `Sendable`.
public final class ThumbdLibrary: Sendable {
    let connection: ThumbdConnection

    /// The server's root, as given.
    public var baseURL: URL { connection.baseURL }
    /// The `Thumbd-Client-Id` sent with every API call.
    public var clientID: String { connection.clientID }

    /// - Parameters:
    ///   - baseURL: the server's root, `http://127.0.0.1:8080/`.
    ///   - clientKey: the client key, when the server has `client_keys` (`/assets` and
    ///     `/prefetch…` answer 401 without); nil by default.
    ///   - clientID: 1 to 64 of `A-Z a-z 0-9 - . _`: whose prefetch jobs `stopCachingAll()`
    ///     stops on a server without client keys; by default a random `thumbd-client-…` per
    ///     library object, so two apps never stop each other's jobs.
    ///   - apiSession: the session of the JSON calls; by default an ephemeral one (no cookies,
    ///     no URL cache) with a 30 s request timeout.
    ///   - imageSession: the session of thumbnail downloads; by default an ephemeral one with 6
    ///     connections a host (URLSession's default) and no URL cache (ThumbdImageManager keeps
    ///     its own memory cache).
    public init(baseURL: URL, clientKey: String? = nil, clientID: String? = nil,
                apiSession: URLSession? = nil, imageSession: URLSession? = nil) {
        func session() -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 30
            configuration.httpMaximumConnectionsPerHost = 6
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            return URLSession(configuration: configuration)
        }
        let id = clientID ?? "thumbd-client-" + UUID().uuidString.prefix(13).lowercased()
        connection = ThumbdConnection(baseURL: baseURL, clientKey: clientKey, clientID: id,
                                      apiSession: apiSession ?? session(), imageSession: imageSession ?? session())
    }

    /// One page of the listing: the `limit` assets after `cursor` (from the top when nil).
    /// - Parameters:
    ///   - sort: `.newest` by default.
    ///   - cursor: a `next` of an earlier page of the same sort; nil for the first page.
    ///   - limit: 0 to 10,000 assets; 100 by default. `0` gives only `total` and `generation`.
    /// - Throws: `ThumbdError`: `.unauthorized` without a valid client key, `.server` with
    ///   `bad_cursor` (a cursor not of this server or of the other sort), `index_building`
    ///   (503 with `retryAfter`) while a fresh index is in its first scan; `.network`.
    public func page(sort: ThumbdSort = .newest, after cursor: ThumbdCursor? = nil, limit: Int = 100) async throws -> ThumbdAssetPage {
        var target = "/assets?sort=\(sort.rawValue)&limit=\(limit)"
        if let cursor { target += "&after=\(cursor.text)" }
        return try await connection.json(ListingWire.self, connection.apiRequest("GET", target)).page(connection)
    }

    /// The listing page by page, by cursor: every asset present throughout is seen exactly once,
    /// in order, while the library changes (offsets would repeat or skip one).
    /// - Parameters:
    ///   - sort: `.newest` by default.
    ///   - pageSize: assets a page, 1 to 10,000; 100 by default.
    public func pages(sort: ThumbdSort = .newest, pageSize: Int = 100) -> ThumbdAssetPages {
        ThumbdAssetPages(library: self, sort: sort, pageSize: max(1, min(10_000, pageSize)))
    }

    /// The whole listing (like `PHAsset.fetchAssets`), paged by cursor.
    /// - Parameters:
    ///   - sort: `.newest` by default.
    ///   - pageSize: assets a request, 1 to 10,000; 1,000 by default.
    /// - Returns: the assets, with the `generation` of the first page: when the library changed
    ///   while the pages came, `changes` gives those changes.
    /// - Throws: as `page(sort:after:limit:)`.
    public func fetchAssets(sort: ThumbdSort = .newest, pageSize: Int = 1000) async throws -> ThumbdFetchResult {
        var assets: [ThumbdAsset] = []
        var generation: Int?
        for try await page in pages(sort: sort, pageSize: pageSize) {
            if generation == nil { generation = page.generation }
            assets += page.assets
        }
        return ThumbdFetchResult(assets: assets, sort: sort, generation: generation ?? 0)
    }

    /// The listing's changes since `result`, like `PHPhotoLibraryChangeObserver`, from the
    /// server's change feed (docs/API.md, "Change feed"): one request at a time, each waiting up
    /// to `wait` for a change (a long-poll), each answer applied to the result before
    /// (`ThumbdChangeDetails`, the server's removed, inserted and changed indexes). When the
    /// server no longer knows the changes since it (410 `generation_too_old`: a restart, or too
    /// long away), or an answer does not fit, the listing is fetched again and the difference
    /// of the two listings given. A change outside a client key's folder moves the generation
    /// and yields nothing. Ends when the task iterating it is cancelled.
    /// - Parameters:
    ///   - result: the fetch result the app shows.
    ///   - wait: how long one request waits for a change, 0 to 60 s (whole seconds); 25 s by
    ///     default (below a proxy's 60 s and the default session's 30 s request timeout).
    /// - Throws: (from the iteration) as `page(sort:after:limit:)`; the first failure ends it
    ///   (503 `too_many_waiters` is waited out, its `Retry-After`, and asked again).
    public func changes(since result: ThumbdFetchResult, wait: Duration = .seconds(25)) -> AsyncThrowingStream<ThumbdChangeDetails, any Error> {
        let seconds = max(0, min(60, wait.components.seconds))
        return AsyncThrowingStream { continuation in
            let task = Task {
                var current = result
                do {
                    while !Task.isCancelled {
                        let target = "/assets/changes?sort=\(current.sort.rawValue)&since=\(current.generation)&wait=\(seconds)"
                        let details: ThumbdChangeDetails
                        do {
                            let changes = try await connection.json(ChangesWire.self, connection.apiRequest("GET", target))
                            details = try ThumbdChangeDetails(applying: changes, to: current, connection)
                        } catch let error as ThumbdError where error.serverError?.code == "too_many_waiters" {
                            try await Task.sleep(for: error.retryAfter ?? .seconds(5))
                            continue
                        } catch let error as ThumbdError where error.serverError?.code == "generation_too_old" {
                            details = ThumbdChangeDetails(from: current, to: try await fetchAssets(sort: current.sort))
                        } catch ThumbdError.invalidResponse {   // an answer that does not fit: listed again
                            details = ThumbdChangeDetails(from: current, to: try await fetchAssets(sort: current.sort))
                        }
                        current = details.fetchResultAfterChanges
                        if details.hasChanges { continuation.yield(details) }
                    }
                    continuation.finish()
                } catch is CancellationError {
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `GET /stats`: the server's counters (docs/stats.md).
    /// - Parameter adminToken: the server's `admin_token`, when it has one (`/stats` answers 401
    ///   without it); nil by default (the client key is not enough).
    /// - Throws: `ThumbdError` (`.unauthorized` without the token), `.network`.
    public func stats(adminToken: String? = nil) async throws -> ThumbdStats {
        var request = connection.apiRequest("GET", "/stats", bearer: adminToken)
        if adminToken == nil { request.setValue(nil, forHTTPHeaderField: "Authorization") }
        return try await connection.json(ThumbdStats.self, request)
    }
}

/// The listing as pages (`ThumbdLibrary.pages`), each request made when the iteration asks for it.
public struct ThumbdAssetPages: AsyncSequence, Sendable {
    public typealias Element = ThumbdAssetPage
    let library: ThumbdLibrary
    let sort: ThumbdSort
    let pageSize: Int

    public func makeAsyncIterator() -> Iterator { Iterator(pages: self) }

    public struct Iterator: AsyncIteratorProtocol {
        let pages: ThumbdAssetPages
        var cursor: ThumbdCursor?
        var ended = false

        init(pages: ThumbdAssetPages) { self.pages = pages }

        /// The next page; nil after the page whose `next` was null.
        /// - Throws: as `ThumbdLibrary.page(sort:after:limit:)`.
        public mutating func next() async throws -> ThumbdAssetPage? {
            if ended { return nil }
            let page = try await pages.library.page(sort: pages.sort, after: cursor, limit: pages.pageSize)
            cursor = page.next
            ended = page.next == nil
            return page
        }
    }
}

/// A whole listing at one moment, like `PHFetchResult`.
public struct ThumbdFetchResult: Sendable, Equatable, RandomAccessCollection {
    /// The assets in `sort`.
    public var assets: [ThumbdAsset]
    /// The order they came in.
    public var sort: ThumbdSort
    /// The listing's `generation` when the fetch began.
    public var generation: Int

    public init(assets: [ThumbdAsset], sort: ThumbdSort, generation: Int) {
        self.assets = assets
        self.sort = sort
        self.generation = generation
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { assets.count }
    public subscript(index: Int) -> ThumbdAsset { assets[index] }
}
