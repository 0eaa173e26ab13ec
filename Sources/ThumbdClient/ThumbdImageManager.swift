import Foundation
import ThumbHash
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A thumbnail as the server sent it: the encoded bytes, to decode with the platform's image
/// decoder (`UIImage(data:)`, `CGImageSource`).
public struct ThumbdThumbnail: Sendable, Equatable {
    /// The encoded image: JPEG, PNG or WebP, as `contentType` says.
    public var data: Data
    /// `image/jpeg`, `image/png` or `image/webp`.
    public var contentType: String
    /// The URL it was fetched from (the asset's versioned URL of its grid).
    public var url: URL
    /// The server's `X-Cache`: `HIT-MEMORY`, `HIT-DISK` or `MISS` (nil when absent).
    public var cacheStatus: String?
    /// The render time a miss reported in `Server-Timing` (`render;dur=`), ms; nil for a hit.
    public var renderMilliseconds: Double?
}

/// A decoded ThumbHash placeholder: a blurred image of about the asset's aspect ratio, 32 px on
/// its longer side.
public struct ThumbdPlaceholder: Sendable, Equatable {
    /// px
    public var width: Int
    /// px
    public var height: Int
    /// 8-bit RGBA, row by row, not premultiplied: `width * height * 4` bytes.
    public var rgba: [UInt8]
}

/// One delivery of `ThumbdImageManager.requestImage`, like a `PHImageManager` result handler
/// call: the placeholder first (`isDegraded`), then the thumbnail.
public enum ThumbdImageResult: Sendable, Equatable {
    /// The asset's ThumbHash decoded; the thumbnail follows.
    case placeholder(ThumbdPlaceholder)
    /// The thumbnail: the last result.
    case thumbnail(ThumbdThumbnail)

    /// Whether a better result follows (`PHImageResultIsDegradedKey`).
    public var isDegraded: Bool {
        if case .placeholder = self { return true }
        return false
    }
}

/// Thumbnails for cells, in the shape of `PHImageManager.requestImage`: each request yields the
/// asset's placeholder at once and then its thumbnail, from a memory cache bounded in bytes or
/// from the server. Identical requests in flight share one download; a request whose task is
/// cancelled (its cell scrolled away) leaves it, and the download of one that every request
/// left is cancelled (its URLSessionTask: the server sees its client go and drops the render
/// when it has not started). Downloads go in the order they were asked for, as many at once as
/// the image session has connections a host (6 by default); one left before its turn is never
/// sent (`ThumbdDownloadQueue`).
public actor ThumbdImageManager {
    /// A download asked for: the requests waiting for it. Its place in line and its
    /// URLSessionTask are `queue`'s and `downloads`'.
    private struct Flight {
        let id: Int
        let url: URL
        var waiters: [Int: CheckedContinuation<ThumbdThumbnail, any Error>]
    }

    nonisolated let library: ThumbdLibrary
    nonisolated let memory: ThumbdMemoryCache
    private var flights: [String: Flight] = [:]
    /// A flight's key by its id (the queue speaks in ids).
    private var keys: [Int: String] = [:]
    /// The downloads sent, by flight id.
    private var downloads: [Int: URLSessionDataTask] = [:]
    /// Which downloads go when, and when a connection is opened first (`ThumbdDownloadQueue`).
    private var queue: ThumbdDownloadQueue
    private var nextID = 0

    /// - Parameters:
    ///   - library: the server.
    ///   - memoryCacheBytes: the most thumbnail bytes kept in memory; an entry over a tenth of
    ///     it is not kept. 32 MiB by default (about 1,000 grid-3 JPEGs).
    public init(library: ThumbdLibrary, memoryCacheBytes: Int = 32 << 20) {
        self.library = library
        memory = ThumbdMemoryCache(limitBytes: memoryCacheBytes)
        #if canImport(FoundationNetworking)
        let opening = ThumbdDownloadQueue.Opening.beforeFirstUse
        #else
        let opening = ThumbdDownloadQueue.Opening.never
        #endif
        queue = ThumbdDownloadQueue(limit: library.connection.imageSession.configuration.httpMaximumConnectionsPerHost,
                                    opening: opening)
    }

    /// The thumbnail bytes the memory cache holds now.
    public nonisolated var memoryCacheBytes: Int { memory.bytes }

    /// Downloads asked for and not ended, waiting their turn or under way (requests for one URL
    /// share one).
    public var downloadsInFlight: Int { flights.count }

    /// An asset's thumbnail of `grid`: the sequence yields `.placeholder` at once when the asset
    /// has a ThumbHash and its thumbnail is not in memory, then `.thumbnail`, then ends. A
    /// thumbnail in memory is yielded alone, at once.
    ///
    /// Cancelling the task that iterates (or dropping the iteration) leaves the request: its
    /// download is cancelled when no other request waits for it.
    /// - Parameters:
    ///   - asset: from the listing; its `thumbnails[grid]` is fetched.
    ///   - grid: `.three` for a 3-column grid.
    ///   - format: forces a format (`&format=`); nil by default: JPEG (PNG for alpha), the
    ///     entries a prefetch without `format` warms.
    /// - Throws: (from the iteration) `ThumbdError`: `.server` with the server's code (404
    ///   `not_found` for a grid the server does not have or an asset gone, 415, 503 with
    ///   `retryAfter`), `.invalidResponse` when the asset lists no URL for `grid`, `.network`;
    ///   `CancellationError` when cancelled.
    public nonisolated func requestImage(for asset: ThumbdAsset, grid: ThumbdGrid, format: ThumbdFormat? = nil) -> AsyncThrowingStream<ThumbdImageResult, any Error> {
        AsyncThrowingStream { continuation in
            guard var url = asset.thumbnails[grid] else {
                continuation.finish(throwing: ThumbdError.invalidResponse("\(asset.url) lists no thumbnail of grid \(grid)"))
                return
            }
            if let format {
                let text = url.absoluteString
                url = URL(string: text + (text.contains("?") ? "&" : "?") + "format=" + format.rawValue) ?? url
            }
            let key = url.absoluteString
            if let thumbnail = memory[key] {
                continuation.yield(.thumbnail(thumbnail))
                continuation.finish()
                return
            }
            if let hash = asset.thumbhash, let image = ThumbHash.decode(hash) {
                continuation.yield(.placeholder(ThumbdPlaceholder(width: image.width, height: image.height, rgba: image.rgba)))
            }
            let task = Task {
                do {
                    let thumbnail = try await self.thumbnail(key: key, url: url)
                    continuation.yield(.thumbnail(thumbnail))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The thumbnail at `url`, waiting with the other requests for it.
    private func thumbnail(key: String, url: URL) async throws -> ThumbdThumbnail {
        if let thumbnail = memory[key] { return thumbnail }
        nextID += 1
        let waiter = nextID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                join(key: key, url: url, waiter: waiter, continuation)
            }
        } onCancel: {
            Task { await self.leave(key: key, waiter: waiter) }
        }
    }

    private func join(key: String, url: URL, waiter: Int, _ continuation: CheckedContinuation<ThumbdThumbnail, any Error>) {
        if var flight = flights[key] {
            flight.waiters[waiter] = continuation
            flights[key] = flight
            return
        }
        nextID += 1
        let id = nextID
        flights[key] = Flight(id: id, url: url, waiters: [waiter: continuation])
        keys[id] = key
        perform(queue.handle(.asked(id)))
    }

    /// A request left (its task was cancelled): it is answered `CancellationError`, and the
    /// download is dropped (waiting) or cancelled (sent) when no request waits for it any more.
    private func leave(key: String, waiter: Int) {
        guard var flight = flights[key], let continuation = flight.waiters.removeValue(forKey: waiter) else { return }
        continuation.resume(throwing: CancellationError())
        if flight.waiters.isEmpty {
            flights[key] = nil
            keys[flight.id] = nil
            perform(queue.handle(.left(flight.id)))
        } else {
            flights[key] = flight
        }
    }

    /// A download ended: its thumbnail is kept in memory and every request waiting is answered.
    private func land(key: String, flight id: Int, _ result: Result<ThumbdThumbnail, any Error>, keptConnection: Bool) {
        downloads[id] = nil
        if case .success(let thumbnail) = result { memory.insert(thumbnail, for: key) }
        if let flight = flights[key], flight.id == id {
            flights[key] = nil
            keys[id] = nil
            for continuation in flight.waiters.values { continuation.resume(with: result) }
        }
        perform(queue.handle(.finished(id, keptConnection: keptConnection)))
    }

    /// Performs the queue's effects. The URLSessionTasks are made and resumed here, in the
    /// queue's order: a download before the no-op that follows it, so that the no-op finds
    /// every connection carrying a download and opens one.
    private func perform(_ effects: [ThumbdDownloadQueue.Effect]) {
        let session = library.connection.imageSession
        for effect in effects {
            switch effect {
            case .send(let id):
                guard let key = keys[id], let url = flights[key]?.url else {
                    perform(queue.handle(.finished(id, keptConnection: true)))
                    continue
                }
                var request = URLRequest(url: url)
                request.setValue("image/jpeg, image/png;q=0.9, */*;q=0.1", forHTTPHeaderField: "Accept")
                let task = session.dataTask(with: request) { data, response, error in
                    let (result, kept) = Self.outcome(url, data, response, error)
                    Task { await self.land(key: key, flight: id, result, keptConnection: kept) }
                }
                downloads[id] = task
                task.resume()
            case .cancel(let id):
                downloads.removeValue(forKey: id)?.cancel()
            case .openConnection:
                var request = URLRequest(url: library.connection.url("/"))
                request.httpMethod = "OPTIONS"
                session.dataTask(with: request) { _, response, error in
                    let kept = error == nil && (response as? HTTPURLResponse).map(Self.keepsConnection) == true
                    Task { await self.opened(kept) }
                }.resume()
            }
        }
    }

    /// A no-op request ended (`ThumbdDownloadQueue.Event.opened`).
    private func opened(_ kept: Bool) {
        perform(queue.handle(.opened(kept)))
    }

    /// Whether the server keeps the connection after `response` (no `Connection: close`).
    private static func keepsConnection(_ response: HTTPURLResponse) -> Bool {
        header("Connection", in: response.allHeaderFields)?.lowercased().contains("close") != true
    }

    /// A download's thumbnail (or error), and whether its connection is kept (false after a
    /// network error or `Connection: close`).
    private static func outcome(_ url: URL, _ data: Data?, _ response: URLResponse?, _ error: (any Error)?) -> (Result<ThumbdThumbnail, any Error>, Bool) {
        if let error { return (.failure(ThumbdError.transport(error)), false) }
        guard let response = response as? HTTPURLResponse else {
            return (.failure(ThumbdError.invalidResponse("not an HTTP response")), false)
        }
        let data = data ?? Data()
        guard response.statusCode == 200 else {
            return (.failure(ThumbdError.answer(status: response.statusCode, headers: response.allHeaderFields, body: data)),
                    keepsConnection(response))
        }
        let fields = response.allHeaderFields
        let timing = header("Server-Timing", in: fields).flatMap { value -> Double? in
            guard let range = value.range(of: "render;dur=") else { return nil }
            return Double(value[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
        return (.success(ThumbdThumbnail(data: data, contentType: header("Content-Type", in: fields) ?? "",
                                         url: url, cacheStatus: header("X-Cache", in: fields), renderMilliseconds: timing)),
                keepsConnection(response))
    }

    /// Empties the memory cache (downloads under way go on).
    public func removeAllCachedThumbnails() { memory.removeAll() }
}
