import Foundation

/// Thumbnails kept in memory, least recently used first out, bounded in bytes; an entry over a
/// tenth of the limit is not kept (one grid-1 thumbnail must not empty the cache). One `NSLock`
/// guards it all, so a request may look here synchronously before it starts any task.
final class ThumbdMemoryCache: @unchecked Sendable {
    private final class Node {
        let key: String
        let thumbnail: ThumbdThumbnail
        var newer: Node?
        weak var older: Node?
        init(key: String, thumbnail: ThumbdThumbnail) { self.key = key; self.thumbnail = thumbnail }
    }

    /// The most bytes held, of thumbnail data.
    let limitBytes: Int
    private let lock = NSLock()
    private var nodes: [String: Node] = [:]
    private var oldest: Node?
    private var newest: Node?
    private var held = 0

    init(limitBytes: Int) { self.limitBytes = max(0, limitBytes) }

    /// Bytes held now.
    var bytes: Int { lock.withLock { held } }
    /// Entries held now.
    var count: Int { lock.withLock { nodes.count } }

    /// The thumbnail under `key`, now the most recently used; nil when not held.
    subscript(key: String) -> ThumbdThumbnail? {
        lock.withLock {
            guard let node = nodes[key] else { return nil }
            unlink(node)
            append(node)
            return node.thumbnail
        }
    }

    /// Keeps `thumbnail` under `key`, evicting the least recently used until it fits.
    func insert(_ thumbnail: ThumbdThumbnail, for key: String) {
        let size = thumbnail.data.count
        guard size * 10 <= limitBytes else { return }
        lock.withLock {
            if let old = nodes.removeValue(forKey: key) {
                unlink(old)
                held -= old.thumbnail.data.count
            }
            while held + size > limitBytes, let victim = oldest {
                unlink(victim)
                nodes[victim.key] = nil
                held -= victim.thumbnail.data.count
            }
            let node = Node(key: key, thumbnail: thumbnail)
            nodes[key] = node
            append(node)
            held += size
        }
    }

    func removeAll() {
        lock.withLock {
            nodes = [:]
            oldest = nil
            newest = nil
            held = 0
        }
    }

    private func unlink(_ node: Node) {
        if oldest === node { oldest = node.newer }
        if newest === node { newest = node.older }
        node.older?.newer = node.newer
        node.newer?.older = node.older
        node.newer = nil
        node.older = nil
    }

    private func append(_ node: Node) {
        node.older = newest
        newest?.newer = node
        newest = node
        if oldest == nil { oldest = node }
    }
}
