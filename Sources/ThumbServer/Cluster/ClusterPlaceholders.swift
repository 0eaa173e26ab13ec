import Cluster
import Dispatch
import Foundation
import Library
import Locking
import Rendering
import Synchronization
import Thumbnails

/// Placeholders across a cluster (docs/cluster.md, "Placeholders"): each photo's placeholder is
/// made by the node that owns it in the ring (`ClusterPrefetch.owns`: the backfill and the
/// preview reads pass over the others' photos), and every node pulls the placeholders its peers
/// made (`GET /cluster/placeholders`, `LibraryIndex.madeThumbhashes`) and keeps those its own
/// index lists with the same source identity (`LibraryIndex.adoptThumbhash`). When to ask whom,
/// and from where, is `PlaceholderPull`'s; this is its driver: a Dispatch timer on its own
/// serial queue (never an event loop) feeds it ticks with the injected clock's time, and the calls
/// it returns are made there, one at a time, through `ClusterPrefetch.send` (a peer marked down
/// by `PeerHealth` is not called: the call fails at once, and the pull backs off). No peer is
/// asked before this node's index is whole (`LibraryIndex.isComplete`), and an entry for a file
/// this node's scans have not seen yet (not listed, or listed at an earlier mtime: the nodes scan
/// the shared library each at its own time) waits, up to `maximumWaiting` of them, and is offered
/// again each time this node's listing changes, until it is kept or no longer wanted.
/// Thread-safe: the pull's state and the waiting entries behind a `Mutex` each; calls and
/// storing on `queue`.
final class ClusterPlaceholders: Sendable {
    /// Entries per call: 1,000 (about 100 KB of JSON).
    static let batch = 1_000
    /// Seconds between asks of a peer that had nothing more: 2.
    static let intervalSeconds = 2.0

    let cluster: ClusterPrefetch
    let index: LibraryIndex
    let clock: any UptimeClock
    /// The admin token to present to peers (every node has the same), read at each call (a
    /// reload may change it); empty: none.
    let adminToken: @Sendable () -> String
    private let pull: Mutex<PlaceholderPull>
    private let queue = DispatchQueue(label: "thumbd.cluster-placeholders", qos: .utility)
    private let timer = Mutex<DispatchSourceTimer?>(nil)
    /// Set by `stop`: no call is made and nothing is stored after it.
    private let stopped = Atomic(false)
    /// Placeholders taken from peers since start (`placeholders.from_peers`).
    private let adopted = Atomic<Int>(0)
    /// The most entries that wait for this node's scans: 50,000 (a few MB); more are dropped
    /// (their photos' placeholders are made here by a render, or come again after a restart).
    static let maximumWaiting = 50_000
    /// Entries this node's index could not take yet (`Adoption.notYetListed`), by path, and the
    /// listing generation they were last offered at.
    private let waiting = Mutex((generation: Int?.none, entries: [DiskPath: (SourceIdentity, [UInt8])]()))

    init(cluster: ClusterPrefetch, index: LibraryIndex, clock: any UptimeClock,
         adminToken: @escaping @Sendable () -> String) {
        self.cluster = cluster
        self.index = index
        self.clock = clock
        self.adminToken = adminToken
        let peers = cluster.settings.peers.indices.filter { $0 != cluster.settings.node }
        pull = Mutex(PlaceholderPull(peers: peers, intervalNanoseconds: UInt64(Self.intervalSeconds * 1e9)))
    }

    /// Placeholders taken from peers since start.
    var adoptedCount: Int { adopted.load(ordering: .relaxed) }

    /// Puts the placeholders this node owns and kept from earlier runs into its feed, and starts
    /// the timer (its first tick at once).
    func start() {
        index.feedStoredThumbhashes { cluster.owns($0.bytes) }
        timer.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now(), repeating: .milliseconds(500))
            source.setEventHandler { [weak self] in self?.tick() }
            source.resume()
            timer = source
        }
    }

    /// Stops for good: the timer, and the calls and stores not yet made (a call under way
    /// finishes, and what it brings is not stored), so nothing is written to the index once the
    /// server has stopped.
    func stop() {
        stopped.store(true, ordering: .releasing)
        timer.withLock { $0?.cancel(); $0 = nil }
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    private func tick() {
        guard !stopped.load(ordering: .acquiring), index.isComplete else { return }
        offerWaiting()
        let effects = pull.withLock { $0.handle(.tick(now: clock.now())) }
        perform(effects)
    }

    /// When the listing changed since the waiting entries were last offered, offers them again:
    /// those kept, not needed or stale go; those still not listed wait on.
    private func offerWaiting() {
        let generation = index.recordsGeneration   // read before offering: a change after it is offered for again
        let entries = waiting.withLock { w -> [DiskPath: (SourceIdentity, [UInt8])] in
            guard w.generation != generation, !w.entries.isEmpty else { return [:] }
            w.generation = generation
            return w.entries
        }
        for (path, (source, hash)) in entries {
            let adoption = index.adoptThumbhash(hash, for: path, source: source)
            if adoption == .kept { adopted.add(1, ordering: .relaxed) }
            if adoption != .notYetListed { waiting.withLock { _ = $0.entries.removeValue(forKey: path) } }
        }
    }

    /// Makes the calls `effects` name, and those their answers lead to, one after another.
    private func perform(_ effects: [PlaceholderPull.Effect]) {
        ThreadRole.assertNot(.eventLoop, "ClusterPlaceholders calls peers")
        var pending = effects
        while !pending.isEmpty, !stopped.load(ordering: .acquiring) {
            guard case .fetch(let peer, let cursor) = pending.removeFirst() else { continue }
            let event: PlaceholderPull.Event
            if let body = fetch(from: peer, after: cursor) {
                for item in body.items where !stopped.load(ordering: .acquiring) { take(item) }
                event = .answered(peer: peer, epoch: body.epoch, next: body.next, more: body.more, now: clock.now())
            } else {
                event = .failed(peer: peer, now: clock.now())
            }
            pending += pull.withLock { $0.handle(event) }
        }
    }

    /// `GET /cluster/placeholders` on `peer` after `cursor`; nil for no answer or another than 200.
    private func fetch(from peer: Int, after cursor: PlaceholderPull.Cursor) -> PlaceholderFeedBody? {
        var path = "/cluster/placeholders?after=\(cursor.after)&limit=\(Self.batch)"
        if let epoch = cursor.epoch { path += "&epoch=" + PathEncoding.percentEncoded(Array(epoch.utf8)) }
        let token = adminToken()
        let headers = token.isEmpty ? [] : [("Authorization", "Bearer " + token)]
        guard let response = try? cluster.send(peer, "GET", path, headers: headers, body: []), response.status == 200 else {
            return nil
        }
        return ClusterPrefetch.decode(response.body, as: PlaceholderFeedBody.self)
    }

    /// Keeps `item` when this node lists its path with its identity and has no placeholder of it.
    private func take(_ item: PlaceholderFeedBody.Item) {
        guard let bytes = PercentDecoding.decodeBytes(item.path), let hash = Data(base64Encoded: item.thumbhash) else { return }
        let source = SourceIdentity(size: item.bytes, modifiedNanoseconds: item.mtimeNs)
        let path = DiskPath(bytes: bytes)
        switch index.adoptThumbhash(Array(hash), for: path, source: source) {
        case .kept:
            adopted.add(1, ordering: .relaxed)
        case .notYetListed:
            waiting.withLock { w in
                if w.entries.count < Self.maximumWaiting || w.entries[path] != nil { w.entries[path] = (source, Array(hash)) }
            }
        case .notNeeded, .stale:
            break
        }
    }
}
