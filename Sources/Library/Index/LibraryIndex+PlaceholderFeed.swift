import Rendering

/// What a node of a cluster tells its peers of the placeholders it made (docs/cluster.md,
/// "Placeholders"): the paths whose placeholder this index stored from a render, the backfill or
/// a preview (`storeThumbhash`), in the order made, each at a sequence number (its place, from
/// 1). A peer pulls from the number after the last it saw, in batches (`madeThumbhashes`), and
/// keeps those its own index lists with the same identity (`adoptThumbhash`).
///
/// The feed is this run's (in memory): `placeholderFeedEpoch` tells runs apart, so that a peer
/// asking with another run's epoch starts from the beginning. A start puts back the stored
/// placeholders this node owns (`feedStoredThumbhashes`), so that a peer that missed them
/// before the restart still gets them. A path made twice (its file changed) is listed twice;
/// each entry gives the placeholder stored now.
extension LibraryIndex {
    /// One placeholder in the feed: a listed path, the identity of the file it was made from,
    /// and the hash.
    public struct FedThumbhash: Sendable, Equatable {
        public let path: DiskPath
        public let identity: SourceIdentity
        public let hash: [UInt8]

        public init(path: DiskPath, identity: SourceIdentity, hash: [UInt8]) {
            self.path = path
            self.identity = identity
            self.hash = hash
        }
    }

    /// The feed's entries after sequence number `after` (0: from the start), at most `limit`
    /// of them, as stored now (an entry whose placeholder was dropped since is left out); and
    /// the number to ask after next time (the last entry looked at), and whether more follow.
    public func madeThumbhashes(after: Int, limit: Int) -> (entries: [FedThumbhash], next: Int, more: Bool) {
        let (paths, next, count) = placeholderFeed.withLock { feed -> ([DiskPath], Int, Int) in
            let start = min(max(0, after), feed.count)
            let end = min(feed.count, start + max(0, limit))
            return (Array(feed[start..<end]), end, feed.count)
        }
        let entries = thumbhashes.withLock { stored in
            paths.compactMap { path in
                stored[path].flatMap { $0.hash.isEmpty ? nil : FedThumbhash(path: path, identity: $0.identity, hash: $0.hash) }
            }
        }
        return (entries, next, next < count)
    }

    /// Puts the placeholders stored now whose path `owns` names into the feed (a start: what
    /// this node made in earlier runs, as the ring's owner of those photos).
    public func feedStoredThumbhashes(owns: (DiskPath) -> Bool) {
        let paths = thumbhashes.withLock { stored in stored.filter { !$0.value.hash.isEmpty }.keys.filter(owns) }
        placeholderFeed.withLock { $0.append(contentsOf: paths.sorted()) }
    }
}
