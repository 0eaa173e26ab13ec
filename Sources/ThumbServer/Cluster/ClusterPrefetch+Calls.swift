import Cluster
import Dispatch
import Foundation
import Library
import Synchronization

/// The node-to-node calls of `ClusterPrefetch`: posts of forwarded items, the calls of a job's
/// parts, and the probes of peers marked down (`PeerHealth`).
extension ClusterPrefetch {
    enum ForwardFailure: Error {
        /// No answer in time (refused, unreachable, timed out, broken): mark the peer down.
        case unreachable
        /// An answer other than 202 (a limit of the owner's, a malformed part).
        case refused
    }

    func post(to peer: Int, paths: [[UInt8]], grid: String, format: String?,
              headers: [(String, String)]) -> Result<PrefetchCounts, ForwardFailure> {
        var body = "{\"grid\":" + JSON.quote(grid)
        if let format { body += ",\"format\":" + JSON.quote(format) }
        // The listing's url form: percent-encoded bytes, which reaches any name, UTF-8 or not.
        body += ",\"urls\":[" + paths.map { "\"" + PathEncoding.percentEncoded($0) + "\"" }.joined(separator: ",") + "]}"
        let response: PeerResponse
        do {
            response = try send(peer, "POST", "/prefetch", headers: headers + [("Content-Type", "application/json")],
                                body: Array(body.utf8))
        } catch {
            return .failure(.unreachable)
        }
        guard response.status == 202, let job = Self.decode(response.body, as: PrefetchJobBody.self) else {
            return .failure(.refused)
        }
        return .success(job.counts)
    }

    /// `calls[i]` (peer, method, path) at once; answers[i] the job it answered with 200, nil
    /// for no call, no answer or another status.
    func call(_ calls: [(Int, String, String)?], headers: [(String, String)]) -> [PrefetchCounts?] {
        let answers = Mutex([PrefetchCounts?](repeating: nil, count: calls.count))
        DispatchQueue.concurrentPerform(iterations: calls.count) { i in
            guard let (peer, method, path) = calls[i],
                  let response = try? send(peer, method, path, headers: headers, body: []), response.status == 200,
                  let job = Self.decode(response.body, as: PrefetchJobBody.self) else { return }
            answers.withLock { $0[i] = job.counts }
        }
        return answers.withLock { $0 }
    }

    /// Probes, at once, each peer marked down whose probe is due (`PeerHealth.probeDue`), and
    /// tells `health` what each found.
    func probeDownPeers() {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = settings.peers.indices.filter { $0 != settings.node && health.probeDue($0, now: now) }
        DispatchQueue.concurrentPerform(iterations: due.count) { i in probe(due[i]) }
    }

    /// `GET /healthz` on `peer`, marked forwarded, within `probeTimeoutMilliseconds`: any answer
    /// (a 503 too) is one, with its `thumbnailRequestAgeHeader`.
    func probe(_ peer: Int) {
        let probe: PeerHealth.Probe
        do {
            let response = try probeClient.send(method: "GET", server: settings.peers[peer].server, path: "/healthz",
                                                headers: [(Self.forwardedHeader, "1"), (Self.peersHeader, ring.fingerprint)])
            let age = response.header(Self.thumbnailRequestAgeHeader).flatMap { UInt64($0) }
            probe = .answered(routedAgo: age.map { $0 * 1_000_000 })
        } catch {
            probe = .failed
        }
        health.probed(peer, probe, now: DispatchTime.now().uptimeNanoseconds)
    }

    /// Whether `peer` is down now, after probing it if a probe is due.
    func isDown(_ peer: Int) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        if health.probeDue(peer, now: now) { probe(peer) }
        return health.isDown(peer, now: DispatchTime.now().uptimeNanoseconds)
    }

    /// One call to `peer`, marked forwarded. A peer marked down is not called (the caller keeps
    /// what it knew, at once, rather than wait out a hung node's timeout on every poll), unless a
    /// probe just found it up; one that does not answer is marked down.
    func send(_ peer: Int, _ method: String, _ path: String, headers: [(String, String)],
              body: [UInt8]) throws -> PeerResponse {
        guard !isDown(peer) else { throw ForwardFailure.unreachable }
        do {
            return try client.send(method: method, server: settings.peers[peer].server, path: path,
                                   headers: headers + [(Self.forwardedHeader, "1"), (Self.peersHeader, ring.fingerprint)], body: body)
        } catch {
            health.markDown(peer, now: DispatchTime.now().uptimeNanoseconds)
            throw error
        }
    }
}
