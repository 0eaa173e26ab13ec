import Foundation
import HTTP
import Library
import Rendering
import Synchronization
import Thumbnails

/// The application behind the HTTP server: routes requests (docs/API.md, "Endpoints"; the table is
/// `Route.all`) to the thumbnail pipeline and the stats, and turns results and errors into
/// responses. Holds no socket state; tests drive it directly through `respond(to:completion:)`.
public final class ThumbService: HTTPResponder {
    /// The settings in force: those of the last reload (`apply`), the start's until then.
    /// A request reads them once (`answer`), so one in flight keeps the settings it began with.
    public var configuration: ServiceConfiguration { settings[0].current.withLock { $0 } }
    /// The settings, one copy per lane (as `resolvedKeys`), so that a request's read takes a
    /// lock no other event loop takes (`apply` writes every copy).
    let settings: [ServiceSettings]
    public let library: Library
    public let pipeline: ThumbnailPipeline
    public let index: LibraryIndex
    /// Makes the placeholders no render has made (started by `Thumbd` when `thumbhash_backfill`).
    public let backfill: ThumbhashBackfill
    /// Makes placeholders from embedded previews as scans list photos (started by `Thumbd` when
    /// `thumbhash_previews`).
    public let previews: PreviewPlaceholders
    public let prefetcher: Prefetcher
    /// Prefetch across the cluster's nodes (`configuration.cluster`); nil for a single node.
    let cluster: ClusterPrefetch?
    /// Placeholders shared across the cluster's nodes (started by `Thumbd`); nil for a single node.
    let clusterPlaceholders: ClusterPlaceholders?
    public let requests: RequestStatistics
    /// Recently resolved thumbnail URLs (see `ResolvedKeyCache`), one memo per lane: a request
    /// uses lane `loopIndex % count`, so each event loop has its own (no lock or reference count
    /// shared with the other loops on a hit).
    let resolvedKeys: [ResolvedKeyCache]
    /// Requests answered 503 `out_of_descriptors` (`descriptors.shortages` in `/stats`).
    let descriptorShortages = Atomic<Int>(0)
    /// The socket server's counters (`connections` in `/stats`); nil in-process (0, 0).
    let server: HTTPServerCounts?
    /// Where videos' poster frames are decoded, for `/stats` `video`; nil when the renderer
    /// decodes none (or is a test's stand-in).
    let videoPosters: VideoPosters?
    /// The change feed's long-polls (`ThumbService+Changes.swift`): their state and parked requests.
    let changeFeed = Mutex(ChangeFeed())
    /// The number the next request to the change feed gets.
    let nextListingWaiter = Atomic<Int>(0)
    /// Where the change feed's waits end: their timers fire on it, and the waiters a change of
    /// the listing answers are answered on it.
    let listingWaitersQueue = DispatchQueue(label: "thumbd.listing-waiters", qos: .utility)
    /// Where the change feed's waits read the time.
    let clock: any UptimeClock
    /// The answer to `GET /` (`GalleryPage.html`), made here so that the page is assembled at
    /// start, not on the first visit; every visit gets these bytes.
    let galleryResponse: HTTPResponse = switch GalleryPage.html {
    case .success(let page):
        HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")]),
                     body: page)
    case .failure(let error):
        APIError(status: 500, code: "internal_error", message: "the gallery's files do not make a page: \(error)").response
    }

    /// - Parameter watches: one per lane (see `resolvedKeys`; give one per HTTP event loop, all
    ///   of one `LibraryWatch.group`, which shares one inotify instance): each tells its lane
    ///   when the library changed, so hits need not `stat` their source; nil: every thumbnail
    ///   request on that lane `stat`s its source. Default: one lane, unwatched. The request
    ///   counters have a shard per lane too.
    /// - Parameter server: the counters of the socket server that serves this service, for
    ///   `/stats`; nil: none (in-process).
    /// - Parameter videoPosters: the renderer's video helpers, for `/stats` `video`; nil: none.
    /// - Parameter clock: where the change feed's waits read the time; the system's uptime by default.
    public init(configuration: ServiceConfiguration, library: Library, pipeline: ThumbnailPipeline, index: LibraryIndex,
                watches: [LibraryWatch?] = [nil], server: HTTPServerCounts? = nil,
                videoPosters: VideoPosters? = nil, clock: any UptimeClock = SystemUptimeClock()) {
        self.clock = clock
        self.server = server
        self.videoPosters = videoPosters
        resolvedKeys = (watches.isEmpty ? [nil] : watches).map { ResolvedKeyCache(watch: $0) }
        settings = resolvedKeys.map { _ in ServiceSettings(configuration) }
        requests = RequestStatistics(shards: resolvedKeys.count)
        self.library = library
        self.pipeline = pipeline
        self.index = index
        prefetcher = Prefetcher(pipeline: pipeline, limits: configuration.prefetchLimits)
        let cluster = configuration.cluster.map(ClusterPrefetch.init(settings:))
        self.cluster = cluster
        // In a cluster, each node makes the placeholders of the photos it owns (docs/cluster.md).
        let owns: @Sendable (DiskPath) -> Bool
        if let cluster { owns = { path in cluster.owns(path.bytes) } } else { owns = { _ in true } }
        previews = PreviewPlaceholders(index: index, placeholders: pipeline.placeholders, scheduler: pipeline.scheduler, owns: owns)
        backfill = ThumbhashBackfill(index: index, pipeline: pipeline, previews: previews, owns: owns)
        let settings = settings
        clusterPlaceholders = cluster.map { cluster in
            ClusterPlaceholders(cluster: cluster, index: index, clock: clock,
                                adminToken: { settings[0].current.withLock { $0.adminToken } })
        }
        // Answered on the waiters' queue, not on the scan's thread (which holds the scan lock).
        index.onGenerationChange { [weak self] generation in
            self?.listingWaitersQueue.async { [weak self] in self?.handleListingWaiters(.generationMoved(to: generation)) }
        }
    }

    /// Takes `new` for the next request (a reload: `Thumbd.reload`); requests in flight keep the
    /// settings they read. Only what `ConfigReload` lets change differs from the old settings.
    func apply(_ new: ServiceConfiguration) {
        for lane in settings { lane.current.withLock { $0 = new } }
    }

    public func respond(to request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        // The thumbnail route before anything else, by a `memcmp` of the target's bytes: every
        // hit comes this way, and walks no table.
        if case .prefix(let prefix) = Route.thumbnails.match, Self.hasPrefix(request.target, prefix) {
            return answer(request, by: Route.thumbnails, completion: completion)
        }
        // `OPTIONS *` asks about the server as a whole (RFC 9110 §9.3.7); the parser gives `*`
        // for no other method.
        if request.target == "*" { return completion(Self.serverOptions) }
        let path = request.path
        for route in Route.all where route.matches(path) {
            return answer(request, by: route, completion: completion)
        }
        // A target no route takes that is not even a valid path (RFC 3986 §2.1: `%` not
        // followed by two hex digits) is malformed, not missing.
        if PercentDecoding.decodeBytes(path) == nil {
            return completion(APIError.badRequest("the path has an invalid percent-escape").response)
        }
        completion(APIError.notFound("no such resource").response)
    }

    /// Answers a request `route` matched: 401 without the admin token where the route needs it,
    /// 404 when the rest of the path names nothing, 405 (with the route's `Allow`) for a method
    /// it does not answer, 204 with `Allow` for OPTIONS, else its handler's response. Every
    /// response of a public route, refusals and errors included (a 401 for a missing or expired
    /// client key, a 400, a 404, a 503…), carries the CORS headers `configuration.cors` gives the
    /// request's `Origin`: a page on another origin can read why it was refused ("sign in again")
    /// instead of seeing a network error.
    private func answer(_ request: HTTPRequest, by route: Route, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        // Read once: every decision about this request is made under one set of keys.
        let configuration = settings[request.loopIndex % settings.count].current.withLock { $0 }
        let method = Route.Methods(method: request.method)
        // First, so that no answer below can leave without them.
        var completion = completion
        if (route.access == .open || route.access == .listing) && configuration.cors.isEnabled {
            let preflight = method == .options && request.headers.contains("Access-Control-Request-Method")
            let cors = configuration.cors.headers(origin: request.headers["Origin"], preflight: preflight)
            if !cors.isEmpty {
                completion = { [completion] response in
                    var response = response
                    for (name, value) in cors { response.headers.add(name, value) }
                    completion(response)
                }
            }
        }
        if route.access != .open,
           let refusal = AdminAuthorization.refusal(for: request, method: method, access: route.access,
                                                    configuration: configuration) {
            return completion(refusal.response)
        }
        // Who is asking, on the app's routes; a CORS preflight of the listing carries no credentials.
        var client = Client.anonymous
        let identified: Result<Client, APIError>?
        switch route.access {
        case .listing where method != .options: identified = self.client(for: request, changing: false, configuration)
        case .prefetch: identified = self.client(for: request, changing: !(method.map(Route.Methods.read.contains) ?? false),
                                                   configuration)
        default: identified = nil
        }
        switch identified {
        case .success(let who): client = who
        case .failure(let refusal): return completion(refusal.response)
        case nil: break
        }
        if let resource = route.resource, let missing = resource(route.rest(of: request.path)) {
            return completion(missing.response)
        }
        let methods = route.methods.union(.options)
        guard let method, methods.contains(method) else {
            return completion(APIError.methodNotAllowed(methods.allow).response)
        }
        if method == .options {
            return completion(HTTPResponse(status: 204, headers: HTTPHeaders([("Allow", methods.allow)])))
        }
        route.handler(self, request, method, client, configuration, completion)
    }

    /// The answer to `OPTIONS *`: 204 with every method some route answers.
    static let serverOptions = HTTPResponse(
        status: 204, headers: HTTPHeaders([("Allow", Route.all.reduce(Route.Methods.options) { $0.union($1.methods) }.allow)]))

    /// Whether `target`'s bytes start with `prefix`'s (a `memcmp`: no `Character` walk).
    static func hasPrefix(_ target: String, _ prefix: StaticString) -> Bool {
        var target = target
        target.makeContiguousUTF8()
        return target.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= prefix.utf8CodeUnitCount
                && memcmp(bytes.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        } ?? false
    }

    /// Counts a request answered 503 `out_of_descriptors`.
    func countDescriptorShortage() {
        descriptorShortages.wrappingAdd(1, ordering: .relaxed)
    }

    /// A JSON response with `Cache-Control: no-store`: `text`, written by hand (the listing,
    /// `/stats`).
    static func json(status: Int, _ text: String) -> HTTPResponse {
        json(status: status, bytes: Array(text.utf8))
    }

    /// A JSON response with `Cache-Control: no-store`: `body` written by `JSONBody.encode`, and
    /// a newline.
    static func json(status: Int, encoding body: some Encodable) -> HTTPResponse {
        json(status: status, bytes: JSONBody.encode(body) + [UInt8(ascii: "\n")])
    }

    private static func json(status: Int, bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                     body: bytes)
    }
}

/// The routes (docs/API.md, "Endpoints"; README, "URLs"), each declared once.
extension Route {
    /// `GET`/`HEAD /thumbnails/{grid}/{asset path}`: matched first (`ThumbService.respond`).
    static let thumbnails = Route(match: .prefix("/thumbnails/"), methods: .read, access: .open) { service, request, _, _, configuration, completion in
        service.cluster?.noteThumbnailRequest()
        service.respondWithThumbnail(to: request, configuration, completion: completion)
    }

    /// Every route, in the order they are matched.
    static let all: [Route] = [
        thumbnails,
        // The gallery is a page, not an API: a link to it may carry a query the page never
        // reads (utm_source, fbclid), and opens the page all the same, as any web page does.
        Route(match: .path("/"), methods: .read, access: .open) { service, _, _, _, _, completion in
            completion(service.galleryResponse)
        },
        Route(match: .path("/assets"), methods: .read, access: .listing) { service, request, _, client, configuration, completion in
            completion(service.respondWithListing(to: request, for: client, configuration))
        },
        Route(match: .path("/assets/changes"), methods: .read, access: .listing) { service, request, _, client, configuration, completion in
            service.respondWithChanges(to: request, for: client, configuration, completion: completion)
        },
        // These three check the disk cache's directories (file I/O): off the event loop. They
        // read no query parameter.
        Route(match: .path("/healthz"), methods: .read, access: .open) { service, request, _, _, _, completion in
            do throws(APIError) {
                try QueryParameters.check(request.query, known: [], of: "/healthz")
            } catch {
                return completion(error.response)
            }
            DispatchQueue.global(qos: .userInitiated).async { completion(service.healthResponse(to: request)) }
        },
        Route(match: .path("/stats"), methods: .read, access: .admin) { service, request, _, _, _, completion in
            do throws(APIError) {
                try QueryParameters.check(request.query, known: [], of: "/stats")
            } catch {
                return completion(error.response)
            }
            DispatchQueue.global(qos: .userInitiated).async { completion(ThumbService.json(status: 200, service.statsJSON())) }
        },
        Route(match: .path("/metrics"), methods: .read, access: .admin) { service, request, _, _, _, completion in
            do throws(APIError) {
                try QueryParameters.check(request.query, known: [], of: "/metrics")
            } catch {
                return completion(error.response)
            }
            DispatchQueue.global(qos: .userInitiated).async {
                completion(HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                                                                           ("Cache-Control", "no-store")]),
                                        body: Array(service.metricsText().utf8)))
            }
        },
        Route(match: .path("/prefetch"), methods: [.post, .delete], access: .prefetch) { service, request, method, client, configuration, completion in
            if method == .post {
                service.startPrefetch(request, for: client, completion: completion)
            } else {
                service.offTheLoopInACluster { completion(service.cancelPrefetches(request, for: client, configuration)) }
            }
        },
        Route(match: .prefix("/prefetch/"), methods: [.get, .head, .delete], access: .prefetch,
              resource: { ThumbService.prefetchJobID($0) == nil ? APIError.notFound("no such prefetch job") : nil }) {
            service, request, method, client, _, completion in
            service.offTheLoopInACluster { completion(service.respondWithPrefetchJob(request, cancel: method == .delete, for: client)) }
        },
        // Internal: a peer's pull of the placeholders this node made (docs/cluster.md).
        Route(match: .path("/cluster/placeholders"), methods: .read, access: .admin) { service, request, _, _, _, completion in
            DispatchQueue.global(qos: .utility).async { completion(service.respondWithPlaceholderFeed(to: request)) }
        },
    ]
}

/// One lane's copy of the service's settings (`ThumbService.settings`), behind its own lock.
final class ServiceSettings: Sendable {
    let current: Mutex<ServiceConfiguration>
    init(_ configuration: ServiceConfiguration) { current = Mutex(configuration) }
}
