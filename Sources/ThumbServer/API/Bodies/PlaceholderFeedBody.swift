/// `GET /cluster/placeholders`'s answer (docs/API.md, "Cluster (internal)"): a batch of the
/// placeholders a node made (`LibraryIndex.madeThumbhashes`), for its peers.
struct PlaceholderFeedBody: Codable, Sendable, Equatable {
    /// One placeholder: the asset path percent-encoded as the listing's `url` encodes it, the
    /// source identity it was made from (`bytes`, `mtime_ns`), and the ThumbHash in base64.
    struct Item: Codable, Sendable, Equatable {
        var path: String
        var bytes: Int
        var mtimeNs: Int64
        var thumbhash: String

        private enum CodingKeys: String, CodingKey {
            case path, bytes, mtimeNs = "mtime_ns", thumbhash
        }
    }

    /// The run of the node's feed the numbers count in (16 hex digits at most).
    var epoch: String
    /// The number to ask after next (`?after=`).
    var next: Int
    /// Whether more entries follow `next` now.
    var more: Bool
    var items: [Item]
}
