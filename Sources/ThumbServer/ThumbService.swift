import Foundation
import HTTP
import Rendering
import Synchronization
import Thumbnails

/// The application behind the HTTP server: routes requests (API.md, "Endpoints") to the
/// thumbnail pipeline and the stats, and turns results and errors into responses. Holds no
/// socket state; tests drive it directly through `respond(to:completion:)`.
public final class ThumbService: HTTPResponder {
    public let configuration: ServiceConfiguration
    public let library: Library
    public let pipeline: ThumbnailPipeline
    public let index: LibraryIndex
    public let prefetcher: Prefetcher
    public let requests: RequestStatistics
    /// Recently resolved thumbnail URLs (see `ResolvedKeyCache`), one memo per lane: a request
    /// uses lane `loopIndex % count`, so each event loop has its own (no lock or reference count
    /// shared with the other loops on a hit).
    let resolvedKeys: [ResolvedKeyCache]
    /// Open and total connections, supplied by whoever runs the socket server.
    let connectionCounts = Mutex<(@Sendable () -> (open: Int, total: Int))?>(nil)

    /// - Parameter watches: one per lane (see `resolvedKeys`; give one per HTTP event loop, all
    ///   of one `LibraryWatch.group`, which shares one inotify instance): each tells its lane
    ///   when the library changed, so hits need not `stat` their source; nil: every thumbnail
    ///   request on that lane `stat`s its source. Default: one lane, unwatched. The request
    ///   counters have a shard per lane too.
    public init(configuration: ServiceConfiguration, library: Library, pipeline: ThumbnailPipeline, index: LibraryIndex,
                watches: [LibraryWatch?] = [nil]) {
        self.configuration = configuration
        resolvedKeys = (watches.isEmpty ? [nil] : watches).map { ResolvedKeyCache(watch: $0) }
        requests = RequestStatistics(shards: resolvedKeys.count)
        self.library = library
        self.pipeline = pipeline
        self.index = index
        prefetcher = Prefetcher(pipeline: pipeline)
    }

    /// Tells `/stats` where connection counts come from.
    public func setConnectionCounts(_ provider: @escaping @Sendable () -> (open: Int, total: Int)) {
        connectionCounts.withLock { $0 = provider }
    }

    public func respond(to request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        let path = request.path
        if Self.hasPrefix(request.target, "/thumbnails/") {
            respondWithThumbnail(to: request, completion: completion)
            return
        }
        if let refusal = AdminAuthorization.refusal(for: request, token: configuration.adminToken) {
            return completion(refusal.response)
        }
        if path == "/prefetch" || path.hasPrefix("/prefetch/") {
            respondWithPrefetch(to: request, completion: completion)
            return
        }
        let response: HTTPResponse
        switch path {
        case "/":
            response = onlyGet(request) ?? HTTPResponse(
                status: 200, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")]),
                body: GalleryPage.html)
        case "/assets":
            response = respondWithListing(to: request)
        case "/healthz":
            response = onlyGet(request) ?? Self.json(status: 200, "{\"status\":\"ok\"}\n")
        case "/stats":
            response = onlyGet(request) ?? Self.json(status: 200, statsJSON())
        case "/metrics":
            response = onlyGet(request) ?? HTTPResponse(
                status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                                                   ("Cache-Control", "no-store")]),
                body: Array(metricsText().utf8))
        default:
            response = APIError.notFound("no such resource").response
        }
        completion(response)
    }

    /// Whether `target`'s bytes start with `prefix`'s (a `memcmp`: no `Character` walk).
    static func hasPrefix(_ target: String, _ prefix: StaticString) -> Bool {
        var target = target
        target.makeContiguousUTF8()
        return target.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= prefix.utf8CodeUnitCount
                && memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        } ?? false
    }

    /// 405 for anything but GET and HEAD on read-only resources.
    func onlyGet(_ request: HTTPRequest) -> HTTPResponse? {
        request.method == "GET" || request.method == "HEAD" ? nil : APIError.methodNotAllowed("GET, HEAD").response
    }

    static func json(status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                     body: Array(text.utf8))
    }
}
