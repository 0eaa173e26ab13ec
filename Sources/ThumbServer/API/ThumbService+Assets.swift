import Foundation
import HTTP
import Library
import Rendering
import Thumbnails

/// `GET /assets?sort=newest|oldest&offset=N&limit=N` or `…&after=CURSOR&limit=N` (docs/API.md,
/// "Listing"): offset paging, or keyset paging from the `next` cursor of an earlier page
/// (`ListingCursor`), which holds while the library changes. Each item also
/// carries `thumbhash` (base64 of its placeholder, or null until one is made) and `thumbnails`:
/// per grid name, the thumbnail's versioned URL,
/// `/thumbnails/{grid}/{encoded path}?v={ThumbnailVersion token}` (README, "Listing").
extension ThumbService {
    /// Most items one page may hold (docs/API.md).
    static let maxListingLimit = 10_000

    /// The page `client` sees: the listing of its `Client.scope` alone (the one place the scope
    /// of `/assets` is applied: everything an item carries comes from this page), each item
    /// written by `ListingItemWriter`. `configuration`: the settings the request read (`answer`).
    func respondWithListing(to request: HTTPRequest, for client: Client, _ configuration: ServiceConfiguration) -> HTTPResponse {
        let query = request.query
        let order: ListingOrder
        do {
            try QueryParameters.check(query, known: QueryParameters.listing, of: "/assets")
            order = try ListingOrder(query: query)
        } catch {
            return error.response
        }
        let offset: Int, limit: Int
        do {
            offset = try Negotiation.queryInteger("offset", in: query, default: 0, range: 0...Int(Int32.max))
            limit = try Negotiation.queryInteger("limit", in: query, default: 100, range: 0...Self.maxListingLimit)
        } catch {
            return error.response
        }
        var start = ListingStart.offset(offset)
        if let after = Negotiation.queryValue("after", in: query) {
            guard Negotiation.queryValue("offset", in: query) == nil else {
                return APIError.badRequest("give either offset or after, not both").response
            }
            do {
                start = .after(try ListingCursor(token: after, order: order).key)
            } catch {
                return error.response
            }
        }
        guard index.isComplete else { return APIError.indexBuilding.response }
        let page = index.page(order: order, from: start, limit: limit, in: client.scope)
        let next = page.hasMore ? page.items.last.map { "\"" + ListingCursor(order: order, key: $0.listingKey).token + "\"" } : nil
        let writer = ListingItemWriter(configuration, now: Self.unixTime())
        var body = "{\"total\":\(page.total),\"offset\":\(start == .offset(offset) ? offset : page.offset),\"generation\":\(page.generation),"
            + "\"next\":\(next ?? "null"),\"items\":["
        body.reserveCapacity(64 + page.items.count * writer.bytesPerItem)
        for (i, item) in page.items.enumerated() {
            if i > 0 { body += "," }
            writer.write(item, thumbhash: page.thumbhashes[i], into: &body)
        }
        body += "]}\n"
        return Self.json(status: 200, body)
    }
}

/// How the listing writes one item (docs/API.md, "Listing"): its fields, its `thumbhash`, and per
/// grid its thumbnail's versioned URL (signed with `signing_keys`). The one home of an item's
/// JSON, for `/assets` and `/assets/changes`; made once per response.
struct ListingItemWriter {
    /// Per grid: its JSON key, its URL prefix and its version seeds (a photo's, a video poster's).
    private let grids: [(key: String, name: [UInt8], prefix: String, photo: ThumbnailVersion, poster: ThumbnailVersion)]
    /// The first signing key and the expiry of URLs signed now, when signing is on.
    private let signer: (key: URLSigning.Key, expires: Int)?

    /// About how many bytes an item takes, to reserve.
    var bytesPerItem: Int { 240 + 60 * grids.count }

    /// The writer of `configuration`'s items, URLs signed at `now` (s since the epoch): by the
    /// first key until `URLSigning.expiry` of one bucket from now (so one to two buckets).
    init(_ configuration: ServiceConfiguration, now: Int) {
        grids = configuration.grids.map { spec in
            (key: JSON.quote(spec.name), name: Array(spec.name.utf8), prefix: "\"/thumbnails/" + PathEncoding.percentEncoded(spec.name.utf8) + "/",
             photo: ThumbnailVersion(spec: spec, quality: configuration.quality),
             poster: ThumbnailVersion(spec: spec, quality: configuration.quality, videoPoster: true))
        }
        let signing = configuration.signing
        signer = signing.keys.first.map { (key: $0, expires: signing.expiry(now: now, lifetime: signing.bucketSeconds)) }
    }

    /// Appends `item` as a JSON object to `body`; `thumbhash`: its placeholder in base64, or nil.
    func write(_ item: AssetRecord, thumbhash: String?, into body: inout String) {
        // `path` as text (a name that is not UTF-8 shows U+FFFD, for display); `url` is the
        // path percent-encoded byte for byte, which reaches the file whatever its name.
        let path = PathEncoding.percentEncoded(item.path.bytes)   // unreserved bytes and %HH only: no JSON escapes
        body += "{\"path\":\(JSON.quote(item.path.description)),\"url\":\"\(path)\",\"bytes\":\(item.bytes),"
            + "\"type\":\"\(item.isVideo ? "video" : "photo")\",\"duration_ms\":\(item.durationMilliseconds.map(String.init) ?? "null"),"
            + "\"width\":\(item.width),\"height\":\(item.height),\"taken\":\"\(item.taken.iso8601)\","
            + "\"modified\":\"\(item.modified.iso8601)\",\"thumbhash\":"
        // Base64's alphabet needs no JSON escapes.
        if let thumbhash { body += "\""; body += thumbhash; body += "\"" } else { body += "null" }
        body += ",\"thumbnails\":{"
        // The index's size and mtime are the identity a GET resolves while the file is unchanged.
        let source = SourceIdentity(size: item.bytes, modifiedNanoseconds: item.modifiedNanoseconds)
        let signedPath = signer.map { _ in URLSigning.canonicalPath(item.path.segments.map { Array($0) }) }
        // Judged by the path, as the cache key is (`CacheKey`): the two must agree.
        let poster = VideoFormats.isVideo(item.path)
        for (g, grid) in grids.enumerated() {
            if g > 0 { body += "," }
            body += grid.key + ":" + grid.prefix + path + "?v=" + (poster ? grid.poster : grid.photo).token(for: source)
            if let signer, let signedPath {
                body += "&" + URLSigning.query(key: signer.key, grid: grid.name, path: signedPath, expires: signer.expires)
            }
            body += "\""
        }
        body += "}}"
    }
}
