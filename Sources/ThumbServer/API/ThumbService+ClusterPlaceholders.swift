import Foundation
import HTTP
import Library

extension ThumbService {
    /// The most entries one `GET /cluster/placeholders` gives (`limit`'s bound): 10,000.
    static let maxFeedLimit = 10_000

    /// `GET /cluster/placeholders?after=N&limit=L&epoch=E` (docs/API.md, "Cluster (internal)"):
    /// the placeholders this node made after sequence number `after` (0 by default), at most
    /// `limit` (1,000 by default), in this run's feed; an `epoch` that is not this run's (a
    /// cursor of an earlier run) starts from the beginning. 400 for a bad value.
    func respondWithPlaceholderFeed(to request: HTTPRequest) -> HTTPResponse {
        let query = request.query
        do {
            try QueryParameters.check(query, known: QueryParameters.placeholderFeed, of: "/cluster/placeholders")
        } catch {
            return error.response
        }
        var after: Int, limit: Int
        do {
            after = try Negotiation.queryInteger("after", in: query, default: 0, range: 0...Int(Int32.max))
            limit = try Negotiation.queryInteger("limit", in: query, default: 1_000, range: 1...Self.maxFeedLimit)
        } catch {
            return error.response
        }
        if Negotiation.queryValue("epoch", in: query).map(String.init) != index.placeholderFeedEpoch { after = 0 }
        let (entries, next, more) = index.madeThumbhashes(after: after, limit: limit)
        let items = entries.map { entry in
            PlaceholderFeedBody.Item(path: PathEncoding.percentEncoded(entry.path.bytes), bytes: entry.identity.size,
                                     mtimeNs: entry.identity.modifiedNanoseconds, thumbhash: Data(entry.hash).base64EncodedString())
        }
        return Self.json(status: 200, encoding: PlaceholderFeedBody(epoch: index.placeholderFeedEpoch, next: next, more: more, items: items))
    }
}
