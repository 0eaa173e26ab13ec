import Cluster
import Dispatch
import Foundation
import Library
import Synchronization

/// Prefetch over a cluster of nodes behind nginx's consistent hash (README "Cluster"): a job
/// that reaches one node keeps the items this node owns (those nginx sends their `GET`s here:
/// `PeerRing` over the asset path, as the deployment's `map $uri` hashes it) and forwards the
/// rest, batched per owner, as a paths prefetch (`urls`) marked `Thumbd-Forwarded`, so that the
/// cache warmed is the one that will serve. The job's parts on other nodes are remembered under
/// its id here: `GET /prefetch/{id}` adds their counts to the local ones, `DELETE` stops them.
/// A peer that does not answer a forward in `peer_timeout_seconds` (refused, unreachable, timed
/// out) is marked down and its items go to the next point of the ring, as nginx does with
/// `max_fails=1 fail_timeout=T` (ngx_http_upstream_module); while it is down, the calls that would
/// pass it over first probe it (`GET /healthz`, at most once a second), and it is up again when
/// nginx routes to it again (`PeerHealth`'s rules). A peer that answers with an error (a 429 of
/// its per-client limits, say) keeps its items, counted failed.
/// Thread-safe: the parts sit behind a `Mutex`; the calls run outside it.
final class ClusterPrefetch: Sendable {
    /// The header a node marks a forwarded prefetch call with: the node it reaches keeps every
    /// item and forwards nothing (the rings agree; a forward is never forwarded again). It
    /// proves nothing and need not: it can only make a node do less (a client sending it warms
    /// one node with items others serve), while the owner checks the caller's own credentials.
    static let forwardedHeader = "Thumbd-Forwarded"
    /// The header each call between nodes carries the caller's upstream fingerprint in
    /// (`PeerRing.fingerprint`), so that a node given other `peers` is noticed.
    static let peersHeader = "Thumbd-Peers"

    /// The header a forwarded `POST /prefetch` names the job it is a part of with: the
    /// coordinating node's index in `peers` and its job id, `"1 5"`. The part's node keeps it
    /// (`coordinator(of:)`), so that a stop-all lists the part under the id its client knows.
    static let jobHeader = "Thumbd-Job"

    /// The header of a node's answer to another node's probe (`GET /healthz` marked
    /// `forwardedHeader`): ms since it last received a thumbnail request; absent for none since
    /// it started. Only nginx sends thumbnail requests, so it says whether nginx routes to the
    /// node (`PeerHealth.Probe.answered`).
    static let thumbnailRequestAgeHeader = "Thumbd-Thumbnail-Request-Age"
    /// The budget of one probe, ms: 500, or `peer_timeout_seconds` when shorter. A probe runs
    /// before a call that would pass the peer over, so a hung peer costs that call this long
    /// once a second at most.
    static let probeTimeoutMilliseconds = 500

    /// The caller's headers a forwarded call carries, so the owner sees the same client (the
    /// admin token or client key, and the id a client names itself by).
    static let passedHeaders = ["Authorization", Client.idHeader]

    /// One part of a job on another node: that node's job id and its counts when last seen.
    struct Part: Sendable, Equatable {
        let peer: Int
        let id: Int
        var counts: PrefetchCounts
    }

    let settings: ClusterSettings
    let ring: PeerRing
    let health: PeerHealth
    let client: PeerClient
    /// The client of probes (`probeTimeoutMilliseconds`).
    let probeClient: PeerClient
    /// Uptime ns of the latest thumbnail request this node received; 0 for none yet.
    private let lastThumbnailRequest = Atomic<UInt64>(0)
    /// Parts on other nodes, by the id of the local job they belong to.
    private let parts = Mutex<[Int: [Part]]>([:])
    /// Local jobs that are parts of another node's job (started by a forward): local id → that
    /// job, by its node and id there.
    private let coordinators = Mutex<[Int: PartKey]>([:])
    /// Items forwarded to owners, forwards that failed (the peer was then marked down), and
    /// calls from nodes with another upstream fingerprint, since start; the fingerprints seen.
    private let totals = Mutex((forwardedItems: 0, failedForwards: 0, peerListMismatches: 0, seen: Set<String>()))

    init(settings: ClusterSettings) {
        self.settings = settings
        ring = PeerRing(peers: settings.peers)
        health = PeerHealth(downSeconds: settings.downSeconds)
        client = PeerClient(timeoutMilliseconds: settings.timeoutMilliseconds)
        probeClient = PeerClient(timeoutMilliseconds: min(Self.probeTimeoutMilliseconds, settings.timeoutMilliseconds))
    }

    /// Notes that a thumbnail request reached this node now (nginx routes to it).
    func noteThumbnailRequest() {
        lastThumbnailRequest.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
    }

    /// Ms since this node last received a thumbnail request; nil for none since it started.
    func thumbnailRequestAgeMilliseconds() -> UInt64? {
        let last = lastThumbnailRequest.load(ordering: .relaxed)
        guard last > 0 else { return nil }
        let now = DispatchTime.now().uptimeNanoseconds
        return now > last ? (now - last) / 1_000_000 : 0
    }

    /// The peer that owns asset path `path` (decoded bytes, as on disk: what the listing's
    /// `url` encodes and nginx's `$uri` decodes back): the ring's point for it, passing over
    /// the peers `down` names (never this node).
    func owner(of path: [UInt8], down: (Int) -> Bool) -> Int {
        ring.owner(of: path) { $0 != self.settings.node && down($0) } ?? settings.node
    }

    /// Whether this node owns asset path `path` with every peer up: the node nginx sends its
    /// thumbnails to, which makes its placeholder (`ClusterPlaceholders`; the same ring and key
    /// as `owner(of:down:)`).
    func owns(_ path: some Collection<UInt8>) -> Bool {
        owner(of: Array(path)) { _ in false } == settings.node
    }

    /// Forwards `items` (each an asset path's bytes and whatever the caller keeps with it) that
    /// other nodes own, one `POST /prefetch` per owner at once, with `grid`, `format` (nil:
    /// none) and the caller's `headers` (`passedHeaders`). Items whose owner could not be
    /// reached go to the next owner, this node included; returns those that came to this node
    /// (`own`), the parts started elsewhere, and the items an owner refused (`refused`).
    /// `job`: the id the local job will have (`Prefetcher.reserveID`), which each part is told
    /// (`jobHeader`).
    func forward<Item>(_ items: [(path: [UInt8], item: Item)], grid: String, format: String?,
                       headers: [(String, String)], job: Int) -> (own: [Item], parts: [Part], refused: Int) {
        var own: [Item] = [], started: [Part] = [], refused = 0
        var pending = items
        // Each round marks at least one more peer down, or ends: one round per peer is enough.
        for _ in 0...settings.peers.count where !pending.isEmpty {
            var byPeer: [Int: [(path: [UInt8], item: Item)]] = [:]
            probeDownPeers()
            let down = health.isDown(now: DispatchTime.now().uptimeNanoseconds)
            for entry in pending {
                let peer = owner(of: entry.path, down: down)
                if peer == settings.node { own.append(entry.item) } else { byPeer[peer, default: []].append(entry) }
            }
            pending = []
            let batches = byPeer.sorted { $0.key < $1.key }.flatMap { peer, entries in
                Self.chunks(of: entries).map { (key: peer, value: $0) }
            }
            let calls = batches.map { (peer: $0.key, paths: $0.value.map(\.path)) }
            let answers = Mutex([Int: Result<PrefetchCounts, ForwardFailure>]())
            DispatchQueue.concurrentPerform(iterations: calls.count) { i in
                let answer = post(to: calls[i].peer, paths: calls[i].paths, grid: grid, format: format,
                                  headers: headers + [(Self.jobHeader, "\(settings.node) \(job)")])
                answers.withLock { $0[i] = answer }
            }
            let results = answers.withLock { $0 }
            for (i, (peer, batch)) in batches.enumerated() {
                switch results[i]! {
                case .success(let counts):
                    started.append(Part(peer: peer, id: counts.id, counts: counts))
                    totals.withLock { $0.forwardedItems += batch.count }
                case .failure(.unreachable):   // marked down by `send`
                    totals.withLock { $0.failedForwards += 1 }
                    pending += batch
                case .failure(.refused):
                    refused += batch.count
                }
            }
        }
        // Rounds out (a peer_down_seconds shorter than the calls let a peer fail again): here.
        own += pending.map(\.item)
        return (own, started, refused)
    }

    /// Most bytes the `urls` of one forwarded body may take, counting each path at its longest
    /// (every byte percent-encoded, 3x, plus quotes and comma): 768 KiB, inside a node's
    /// `max_body_bytes` (1 MiB by default). A batch beyond it goes as several parts.
    static let batchBodyBytes = 768 << 10

    /// `entries` cut into runs whose `urls` fit `batchBodyBytes` (at least one entry each).
    static func chunks<Item>(of entries: [(path: [UInt8], item: Item)]) -> [[(path: [UInt8], item: Item)]] {
        var chunks: [[(path: [UInt8], item: Item)]] = [[]]
        var bytes = 0
        for entry in entries {
            let size = 3 * entry.path.count + 3
            if bytes + size > batchBodyBytes && !chunks[chunks.count - 1].isEmpty {
                chunks.append([])
                bytes = 0
            }
            chunks[chunks.count - 1].append(entry)
            bytes += size
        }
        return chunks
    }

    private static let decoder = JSONDecoder()

    /// The `Body` a node answered with (`PrefetchJobBody`, `PrefetchJobListBody`): nil for
    /// anything else.
    static func decode<Body: Decodable>(_ body: [UInt8], as type: Body.Type) -> Body? {
        try? decoder.decode(type, from: Data(body))
    }

    /// Keeps `parts` as job `id`'s new counts, unless the job's parts were forgotten meanwhile.
    private func update(_ parts: [Part], of id: Int) {
        self.parts.withLock { if $0[id] != nil { $0[id] = parts } }
    }

    /// Remembers `parts` as local job `id`'s.
    func remember(_ parts: [Part], of id: Int) {
        guard !parts.isEmpty else { return }
        self.parts.withLock { $0[id] = parts }
    }

    /// Job `id`'s parts elsewhere, refreshed from their nodes while any runs (`GET
    /// /prefetch/{id}` there, with the caller's `headers`). A part its node does not answer for
    /// (down, hung, or restarted without it: 404) is lost: its outstanding items count as
    /// failed and it ends, so that the job ends too (nginx sends those items' GETs elsewhere
    /// meanwhile, where they are misses).
    func refreshedParts(of id: Int, headers: [(String, String)]) -> [Part] {
        var parts = self.parts.withLock { $0[id] ?? [] }
        guard parts.contains(where: { $0.counts.state == "running" }) else { return parts }
        let answers = call(parts.map { $0.counts.state == "running" ? ($0.peer, "GET", "/prefetch/\($0.id)") : nil },
                           headers: headers)
        for i in parts.indices where parts[i].counts.state == "running" {
            parts[i].counts = answers[i] ?? parts[i].counts.lost()
        }
        update(parts, of: id)
        return parts
    }

    /// Stops job `id`'s parts (`DELETE /prefetch/{part}` on each node) and returns their final
    /// counts; the items of a part whose node does not answer count as cancelled.
    func stopParts(of id: Int, headers: [(String, String)]) -> [Part] {
        let parts = stop(self.parts.withLock { $0[id] ?? [] }, headers: headers)
        update(parts, of: id)
        return parts
    }

    /// Stops `parts` (`DELETE /prefetch/{part}` on each node that still runs one) and returns
    /// them in their final state; the items of a part whose node does not answer count as
    /// cancelled.
    func stop(_ parts: [Part], headers: [(String, String)]) -> [Part] {
        var parts = parts
        let answers = call(parts.map { $0.counts.state == "running" ? ($0.peer, "DELETE", "/prefetch/\($0.id)") : nil },
                           headers: headers)
        for i in parts.indices where parts[i].counts.state == "running" {
            parts[i].counts = answers[i] ?? parts[i].counts.stopped()
        }
        return parts
    }

    /// `DELETE /prefetch` (with `all`: `?all=true`, every client's) on every other node, marked
    /// forwarded, with the caller's `headers`: the caller's jobs stop everywhere, whichever node
    /// started them. Returns the jobs each node stopped, by (peer, id), for folding into the
    /// local jobs' parts and listing the jobs other nodes coordinate (`coordinatedElsewhere`).
    func stopEverywhere(all: Bool, headers: [(String, String)]) -> [PartKey: Stopped] {
        let peers = settings.peers.indices.filter { $0 != settings.node }
        let answers = Mutex([PartKey: Stopped]())
        DispatchQueue.concurrentPerform(iterations: peers.count) { i in
            let peer = peers[i]
            guard let response = try? send(peer, "DELETE", all ? "/prefetch?all=true" : "/prefetch", headers: headers, body: []),
                  response.status == 200,
                  let list = Self.decode(response.body, as: PrefetchJobListBody.self) else { return }
            let stopped = list.jobs.map(Stopped.init)
            answers.withLock { for job in stopped { $0[PartKey(peer: peer, id: job.counts.id)] = job } }
        }
        return answers.withLock { $0 }
    }

    /// A part, by its node and its id there; in a job body (`PrefetchJobBody.partOf`),
    /// `{"node": N, "id": J}`: `node`, the node's index in `peers`; `id`, the job's id there.
    struct PartKey: Hashable, Sendable, Codable {
        let peer: Int
        let id: Int

        private enum CodingKeys: String, CodingKey {
            case peer = "node", id
        }
    }

    /// After `stopEverywhere`: local job `id`'s parts with the final counts their nodes gave.
    /// A part still running when last seen that no node reported (it had ended just before, or
    /// its node did not answer) is asked for once more (`GET`, with the caller's `headers`);
    /// without an answer its outstanding items count as cancelled.
    func fold(_ stopped: [PartKey: Stopped], into id: Int, headers: [(String, String)]) -> [Part] {
        var parts = self.parts.withLock { $0[id] ?? [] }
        for i in parts.indices {
            if let job = stopped[PartKey(peer: parts[i].peer, id: parts[i].id)] { parts[i].counts = job.counts }
        }
        let unreported = parts.indices.filter {
            parts[$0].counts.state == "running" && stopped[PartKey(peer: parts[$0].peer, id: parts[$0].id)] == nil
        }
        let answers = call(unreported.map { (parts[$0].peer, "GET", "/prefetch/\(parts[$0].id)") }, headers: headers)
        for (k, i) in unreported.enumerated() {
            parts[i].counts = answers[k].map { $0.state == "running" ? $0.stopped() : $0 } ?? parts[i].counts.stopped()
        }
        update(parts, of: id)
        return parts
    }

    /// The local jobs with a part still running elsewhere (as last seen): a stop-all stops and
    /// reports them even when their own items have all ended.
    var jobsWithRunningParts: [Int] {
        parts.withLock { $0.filter { $0.value.contains { $0.counts.state == "running" } }.map(\.key) }.sorted()
    }

    /// Forgets the parts of jobs no longer kept (`Prefetcher.retainedJobs`), and which jobs
    /// kept here were parts, given the ids kept.
    func forget(except kept: (Int) -> Bool) {
        parts.withLock { $0 = $0.filter { kept($0.key) } }
        coordinators.withLock { $0 = $0.filter { kept($0.key) } }
    }

    /// Remembers that local job `id` is a part of `job` (a forward's `jobHeader`).
    func remember(_ id: Int, isPartOf job: PartKey) {
        coordinators.withLock { $0[id] = job }
    }

    /// The job on another node that local job `id` is a part of; nil for a job of this node's.
    func coordinator(of id: Int) -> PartKey? {
        coordinators.withLock { $0[id] }
    }

    /// The job a forward's `jobHeader` names (`"NODE ID"`), when it names a peer other than
    /// this node; nil otherwise.
    func job(named header: String?) -> PartKey? {
        let fields = header?.split(separator: " ") ?? []
        guard fields.count == 2, let node = Int(fields[0]), let id = Int(fields[1]),
              settings.peers.indices.contains(node), node != settings.node else { return nil }
        return PartKey(peer: node, id: id)
    }

    /// A call from another node arrived with upstream fingerprint `fingerprint` (nil: none):
    /// counted, and warned about once per fingerprint, when it is not this node's. Returns the
    /// warning to print, if any.
    func checkPeers(_ fingerprint: String?) -> String? {
        guard let fingerprint, fingerprint != ring.fingerprint else { return nil }
        let first = totals.withLock { t in
            t.peerListMismatches += 1
            return t.seen.insert(fingerprint).inserted
        }
        return first ? "a node called with peers fingerprint \(fingerprint), this node's is \(ring.fingerprint): the nodes "
            + "were given different peers, so they disagree on which node owns a photo (give every node nginx's server lines)" : nil
    }

    /// Items forwarded, failed forwards and calls from nodes with other peers since start; and
    /// which peers are down now.
    var statistics: (forwardedItems: Int, failedForwards: Int, peerListMismatches: Int, down: [Bool]) {
        let now = DispatchTime.now().uptimeNanoseconds
        let t = totals.withLock { $0 }
        return (t.forwardedItems, t.failedForwards, t.peerListMismatches, settings.peers.indices.map { health.isDown($0, now: now) })
    }
}
