import Foundation
import HTTP
import Library
import Rendering
import Thumbnails

/// `GET`/`HEAD /thumbnails/{grid}/{asset path}` (docs/API.md, "Thumbnails").
extension ThumbService {
    /// `retries`: how many more times a render that finds its source changed or gone since the
    /// path was resolved starts over from the path (the file now there, if any, is the one the
    /// client wants: a `current -> v2` link switched and `v1` deleted must not give a 404).
    /// `configuration`: the settings the request read (`answer`).
    func respondWithThumbnail(to request: HTTPRequest, _ configuration: ServiceConfiguration, retries: Int = 1,
                              completion: @escaping @Sendable (HTTPResponse) -> Void) {
        // A URL that is not signed as it must be is refused before anything looks at the disk.
        // A signed one's answers are fresh until its `exp` at most (`thumbnailCacheControl`).
        let signedUntil: Int?
        do {
            signedUntil = configuration.signing.isEnabled
                ? try configuration.signing.verifiedExpiry(path: request.path, query: request.query, now: Self.unixTime()) : nil
        } catch {
            return completion(error.response)
        }
        let resolved: ResolvedKeyCache.Entry
        let versioned: Bool
        do {
            let query = try Negotiation.thumbnailQuery(request.query, accept: request.headers.values("Accept"),
                                                       webpEnabled: configuration.webpEnabled)
            resolved = try resolvedURL(for: request, format: query.format)
            // Only the source's current token makes the URL one that changes with the thumbnail.
            versioned = resolved.isCurrent(version: query.version)
        } catch {
            return completion(error.response)
        }
        let key = resolved.key
        let noneMatch = request.headers.contains("If-None-Match")
            ? EntityTag.noneMatch(request.headers.values("If-None-Match"), etag: key.etag) : .none
        // The ETag itself is only ever sent with a 200 for this very key: answer at once.
        if case .tag = noneMatch {
            return completion(Self.notModified(key, cacheControl: cacheControl(configuration, versioned: versioned, signedUntil: signedUntil)))
        }
        // Hits are answered here, without a closure or a flight.
        let absence: ThumbnailPipeline.Absence
        switch pipeline.cached(key, acceptsFile: true) {
        case .hit(let result):
            if case .any = noneMatch {
                return completion(Self.notModified(key, cacheControl: cacheControl(configuration, versioned: versioned, signedUntil: signedUntil)))
            }
            return completion(hitResponse(result, for: resolved, configuration, versioned: versioned, signedUntil: signedUntil))
        case .absent(let missing):
            absence = missing
        }
        let thumbnailRequest = ThumbnailRequest(key: key, asset: resolved.asset)
        let waiting = pipeline.thumbnail(for: thumbnailRequest, after: absence) { [self] result in
            // Worked out now, not when the request came: a render may take seconds of a signed URL's life.
            switch result {
            case .success(let result):
                if case .any = noneMatch {
                    return completion(Self.notModified(key, cacheControl: cacheControl(configuration, versioned: versioned, signedUntil: signedUntil)))
                }
                completion(result.tier == .miss
                    ? missResponse(result, for: key, cacheControl: cacheControl(configuration, versioned: versioned, signedUntil: signedUntil))
                    : hitResponse(result, for: resolved, configuration, versioned: versioned, signedUntil: signedUntil))
            case .failure(.render(let error)) where (error.kind == .sourceChanged || error.kind == .sourceNotFound)
                && retries > 0:
                respondWithThumbnail(to: request, configuration, retries: retries - 1, completion: completion)
            case .failure(let error):
                if case .render(let failure) = error, failure.kind == .outOfDescriptors { countDescriptorShortage() }
                completion(Self.apiError(for: error).response)
            }
        }
        // A client that goes away stops waiting: a render nobody waits for is not started.
        if let waiting { request.clientAbort.onAbort { [pipeline] in pipeline.abandon(waiting) } }
    }

    /// The time now, whole seconds since 1970 (signed URLs' `exp`, client keys' expiry).
    static func unixTime() -> Int { Int(Date().timeIntervalSince1970) }

    /// The `Cache-Control` of a thumbnail answer sent now (`thumbnailCacheControl`); the clock is
    /// read only for a signed URL (`signedUntil`: its `exp`).
    private func cacheControl(_ configuration: ServiceConfiguration, versioned: Bool, signedUntil: Int?) -> String {
        configuration.thumbnailCacheControl(versioned: versioned, signedUntil: signedUntil,
                                            now: signedUntil == nil ? 0 : Self.unixTime())
    }

    /// The headers every 200 for `key` carries (docs/API.md, "Thumbnails"); `cacheControl` is the
    /// versioned or the unversioned policy.
    private func thumbnailHeaders(for key: CacheKey, format: ImageFormat, tier: CacheTier,
                                  cacheControl: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(6)
        headers.add("Content-Type", format.mediaType)
        headers.add("ETag", key.etag)
        headers.add("Cache-Control", cacheControl)
        headers.add("Vary", "Accept")
        headers.add("X-Cache", tier.rawValue)
        return headers
    }

    /// A 200 from the memory or disk tier, with the URL's prepared headers; for a signed URL
    /// (`signedUntil`: its `exp`), headers made now, since its `Cache-Control` counts down to `exp`.
    private func hitResponse(_ result: ThumbnailResult, for resolved: ResolvedKeyCache.Entry, _ configuration: ServiceConfiguration,
                             versioned: Bool, signedUntil: Int?) -> HTTPResponse {
        guard signedUntil != nil else {
            return Self.ok(resolved.headers(tier: result.tier, format: result.format, versioned: versioned), result.body)
        }
        return Self.ok(thumbnailHeaders(for: resolved.key, format: result.format, tier: result.tier,
                                        cacheControl: cacheControl(configuration, versioned: versioned, signedUntil: signedUntil)), result.body)
    }

    /// A 200 with `headers` and the thumbnail's bytes, from memory or sent from their file.
    private static func ok(_ headers: HTTPHeaders, _ body: ThumbnailResult.Body) -> HTTPResponse {
        switch body {
        case .file(let file):
            let region = HTTPFileRegion(fd: file.fd, offset: file.offset, count: file.count, owner: file.owner)
            return HTTPResponse(status: 200, headers: headers, file: region)
        case .bytes(let bytes):
            return HTTPResponse(status: 200, headers: headers, body: bytes)
        }
    }

    /// A 200 for a render this request waited for, with its `Server-Timing`.
    private func missResponse(_ result: ThumbnailResult, for key: CacheKey, cacheControl: String) -> HTTPResponse {
        var headers = thumbnailHeaders(for: key, format: result.format, tier: .miss, cacheControl: cacheControl)
        if let ms = result.renderMilliseconds {
            headers.add("Server-Timing", "render;dur=" + String(format: "%.1f", ms))
        }
        return Self.ok(headers, result.body)
    }

    /// 304 (RFC 9110 §15.4.5): no body; `ETag`, `Cache-Control` and `Vary` as on the 200.
    static func notModified(_ key: CacheKey, cacheControl: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("ETag", key.etag)
        headers.add("Cache-Control", cacheControl)
        headers.add("Vary", "Accept")
        return HTTPResponse(status: 304, headers: headers)
    }

    /// Resolves the source of `/thumbnails/{grid}/{asset path}` in `format` (from the query and
    /// `Accept`: `Negotiation.thumbnailQuery`), through the memo of recently resolved URLs,
    /// which is keyed by the path and format alone: `?v=` picks headers, not the entry.
    /// - Throws: `APIError` 400 (bad escapes, a path that is not UTF-8 and names no file), 404
    ///   (unknown grid, no such asset), 415 (not a regular file).
    func resolvedURL(for request: HTTPRequest, format: FormatChoice) throws(APIError) -> ResolvedKeyCache.Entry {
        let memo = resolvedKeys[request.loopIndex % resolvedKeys.count]
        let stamp = memo.stamp()
        let known = memo.lookUp(request.path, format: format, stamp: stamp)
        if case .current(let entry) = known { return entry }
        let (key, asset) = try resolveCacheKey(path: request.path, format: format)
        if case .changed(let entry) = known, let same = memo.confirm(entry, key: key, asset: asset, stamp: stamp) {
            return same
        }
        // Unsigned URLs' headers (a signed URL's hits make theirs: `hitResponse`).
        return memo.store(request.path, format: format, key: key, asset: asset, stamp: stamp) { tier, format, versioned in
            thumbnailHeaders(for: key, format: format, tier: tier,
                             cacheControl: configuration.thumbnailCacheControl(versioned: versioned, signedUntil: nil, now: 0))
        }
    }

    /// The full walk for `resolvedURL(for:format:)`: decode, find the grid, resolve the file, build the key.
    private func resolveCacheKey(path: Substring, format: FormatChoice) throws(APIError) -> (CacheKey, ResolvedAsset) {
        let rest = path.dropFirst("/thumbnails/".count)
        var segments: [[UInt8]] = []
        for raw in rest.split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = PercentDecoding.decodeBytes(raw) else {
                throw APIError.badRequest("the path has an invalid percent-escape")
            }
            if segment.contains(0) { throw APIError.badRequest("the path contains a NUL byte") }
            segments.append(segment)
        }
        guard let gridBytes = segments.first, let gridName = String(validating: gridBytes, as: UTF8.self) else {
            throw APIError.badRequest("the grid is not UTF-8")
        }
        guard let spec = configuration.grid(named: gridName) else {
            throw APIError.notFound(GridSpec.unknown(gridName, among: configuration.grids))
        }
        let names = Array(segments.dropFirst())
        let asset: ResolvedAsset
        do {
            asset = try library.resolve(names: names)
        } catch {
            switch error {
            // A name that is not UTF-8 is looked up as its bytes (a file from an old Latin-1
            // share); when it names nothing, the path is invalid UTF-8, as docs/API.md has it: 400.
            case .notFound where names.contains(where: { String(validating: $0, as: UTF8.self) == nil }):
                throw APIError.badRequest("the path is not UTF-8 and names no file")
            case .notFound, .outsideRoot: throw APIError.notFound("no such asset")
            case .notRegularFile:
                throw APIError(status: 415, code: "unsupported_source", message: "the asset is not a regular file")
            case .forbidden:
                throw Self.apiError(for: .render(RenderError(kind: .sourceUnreadable, message: "a directory on the way cannot be searched")))
            case .unreadable(let assetPath):
                // As a render that could not open it: its placeholder goes from the listing too.
                pipeline.placeholders.forget(assetPath)
                throw Self.apiError(for: .render(RenderError(kind: .sourceUnreadable, message: "the file cannot be read")))
            case .outOfDescriptors:
                countDescriptorShortage()
                throw APIError.outOfDescriptors
            }
        }
        return (cacheKey(of: asset, grid: spec, format: format), asset)
    }

    /// The cache key of `asset` at `grid` in `format`: the one key GET, HEAD and prefetch all
    /// read and write (docs/API.md, "Thumbnails": "The same key is used by GET, HEAD and prefetch").
    func cacheKey(of asset: ResolvedAsset, grid: GridSpec, format: FormatChoice) -> CacheKey {
        CacheKey(asset: asset.assetPath, source: asset.identity, spec: grid, format: format, quality: configuration.quality)
    }

    /// Maps pipeline errors to docs/API.md statuses: the one mapping of a `RenderError.Kind` (and of
    /// a full queue or a timeout) to a status, code and message.
    static func apiError(for error: ThumbnailError) -> APIError {
        switch error {
        case .overloaded:
            return APIError(status: 503, code: "overloaded", message: "the render queue is full; retry shortly",
                            headers: ["Retry-After": "1"])
        case .deadlineExceeded:
            return APIError(status: 503, code: "render_timeout", message: "the render took too long; retry shortly",
                            headers: ["Retry-After": "5"])
        case .render(let error):
            switch error.kind {
            case .sourceNotFound: return .notFound("no such asset")
            case .unsupportedSource:
                return APIError(status: 415, code: "unsupported_source", message: error.message)
            case .sourceTooLarge:
                return APIError(status: 422, code: "source_too_large", message: error.message)
            case .sourceChanged:
                return APIError(status: 503, code: "source_changed",
                                message: "the source changed while it was rendered; retry shortly",
                                headers: ["Retry-After": "1"])
            case .internalFailure:
                return APIError(status: 500, code: "internal_error", message: "the thumbnail could not be rendered")
            case .sourceUnreadable:
                return APIError(status: 403, code: "forbidden",
                                message: "the server may not read this source (its file permissions)")
            case .outOfDescriptors:
                return .outOfDescriptors
            case .decodeTimeout:
                return APIError(status: 503, code: "render_timeout", message: error.message,
                                headers: ["Retry-After": "5"])
            }
        }
    }
}
