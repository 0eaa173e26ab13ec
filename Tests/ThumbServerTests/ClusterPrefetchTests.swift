@testable import Cluster
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Prefetch that warms the node that will serve (issue 18, README "Cluster"), over the shipped
/// deployment (`NginxDeploymentTests.Deployment`: a real nginx in front of three real thumbd
/// nodes, 18 fixture photos): a range prefetch sent through nginx reaches one node, which keeps
/// its own items and forwards the rest to their owners; the GETs nginx then sends are hits. A
/// node killed moves only its keys, and they come back with it.
@Suite(.serialized) struct ClusterPrefetchTests {
    typealias Deployment = NginxDeploymentTests.Deployment
    static let client = ["Thumbd-Client-Id": "phone"]

    /// POSTs `body` to `/prefetch` through nginx as `client` (with `authorization`, when given);
    /// the job JSON.
    static func startPrefetch(_ deployment: Deployment, _ body: String, authorization: String? = nil) throws -> [String: Any] {
        let request = "POST /prefetch HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nThumbd-Client-Id: phone\r\n"
            + (authorization.map { "Authorization: \($0)\r\n" } ?? "")
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        let response = try TestClient.parse(try TestClient.exchange(port: deployment.front, Array(request.utf8)))
        try #require(response.status == 202, "\(response.status) \(response.text): \(deployment.logs)")
        return response.json
    }

    /// Polls job `id` through nginx until it is no longer running (at most 30 s); its last JSON.
    static func finished(_ deployment: Deployment, job id: Int) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(30)
        while true {
            let job = try TestClient.get(port: deployment.front, "/prefetch/\(id)", headers: client)
            try #require(job.status == 200, "job \(id): \(job.status) \(job.text)")
            if job.json["state"] as? String != "running" || Date() > deadline { return job.json }
            usleep(50_000)
        }
    }

    /// The listing through nginx, oldest first: (path, grid-`grid` URL) of each item.
    static func thumbnails(_ deployment: Deployment, grid: String) throws -> [(path: String, url: String)] {
        let listing = try TestClient.get(port: deployment.front, "/assets?sort=oldest&limit=100", headers: client)
        let items = try #require(listing.json["items"] as? [[String: Any]])
        return try items.map { item in
            (try #require(item["path"] as? String), try #require((item["thumbnails"] as? [String: String])?[grid]))
        }
    }

    /// Each node's `/stats` `node.forwarded_items` (0 for a stopped node).
    static func forwarded(_ deployment: Deployment) -> [Int] {
        deployment.stats().map { (($0?["node"] as? [String: Any])?["forwarded_items"] as? Int) ?? 0 }
    }

    static func renders(_ stats: [[String: Any]?]) -> [Int] {
        stats.map { (($0?["renders"] as? [String: Any])?["total"] as? Int) ?? 0 }
    }

    @Test func aRangePrefetchThroughNginxWarmsTheNodesThatServe() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        let photos = try Self.thumbnails(deployment, grid: "3")
        #expect(photos.count == 18)
        let owners = photos.map { ring.owner(of: Array($0.path.utf8))! }

        let started = try Self.startPrefetch(deployment, #"{"grid": "3", "sort": "oldest", "start": 0, "end": 18}"#)
        #expect(started["total"] as? Int == 18, "\(started)")
        let job = try Self.finished(deployment, job: try #require(started["id"] as? Int))
        // The job's counts add up across the nodes: every item rendered somewhere.
        #expect(job["state"] as? String == "done" && job["total"] as? Int == 18 && job["done"] as? Int == 18, "\(job)")

        // One node took the job and forwarded the items it does not own, each to its owner.
        let forwarded = Self.forwarded(deployment)
        let coordinator = try #require(forwarded.firstIndex { $0 > 0 }, "nothing forwarded: \(forwarded)")
        #expect(forwarded[coordinator] == owners.filter { $0 != coordinator }.count, "forwarded \(forwarded), owners \(owners)")
        #expect(forwarded.enumerated().allSatisfy { $0.offset == coordinator || $0.element == 0 })
        let rendered = Self.renders(deployment.stats())
        #expect(rendered == deployment.nodes.indices.map { node in owners.filter { $0 == node }.count },
                "renders per node \(rendered), owners \(owners)")

        // The GETs nginx sends for the range are hits on the node it sends them to.
        var hits = 0
        for photo in photos {
            let response = try TestClient.get(port: deployment.front, photo.url)
            #expect(response.status == 200)
            if response.header("X-Cache")?.hasPrefix("HIT") == true { hits += 1 }
        }
        #expect(hits == photos.count, "\(hits) of \(photos.count) hits")   // the issue asks >= 98%: 18 of 18 here
        #expect(Self.renders(deployment.stats()) == rendered)

        // Stopping a finished job changes nothing; stop-all reaches every node.
        let stopAll = try TestClient.get(port: deployment.front, "/prefetch", method: "DELETE", headers: Self.client)
        #expect(stopAll.status == 200)
    }

    @Test func stoppingAJobStopsItsPartsOnEveryNode() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        // 18 photos x 3 grids, asked at once: more than the nodes render before the stop.
        var jobs: [Int] = []
        for grid in ["1", "3", "5"] {
            let started = try Self.startPrefetch(deployment, #"{"grid": "\#(grid)", "sort": "oldest", "start": 0, "end": 18}"#)
            jobs.append(try #require(started["id"] as? Int))
        }
        let stopped = try TestClient.get(port: deployment.front, "/prefetch", method: "DELETE", headers: Self.client)
        #expect(stopped.status == 200)
        let final = try #require(stopped.json["jobs"] as? [[String: Any]], "\(stopped.text)")
        // The jobs as the caller sees them: whole (18 each), each item accounted for once.
        for job in final where jobs.contains(job["id"] as? Int ?? -1) {
            let counts = ["done", "skipped", "failed", "not_stored", "cancelled"].map { job[$0] as? Int ?? -1 }
            #expect(job["total"] as? Int == 18 && counts.reduce(0, +) == 18 && job["state"] as? String != "running", "\(job)")
        }
        // Nothing is left queued anywhere.
        let deadline = Date().addingTimeInterval(10)
        var queued: [Int] = []
        repeat {
            queued = deployment.stats().map { (($0?["prefetch"] as? [String: Any])?["queued"] as? Int) ?? -1 }
            if queued.allSatisfy({ $0 == 0 }) { break }
            usleep(50_000)
        } while Date() < deadline
        #expect(queued == [0, 0, 0], "prefetch items still queued per node: \(queued)")
    }

    /// Issue 31, item 6: `DELETE /prefetch` through nginx lists the caller's jobs under the ids
    /// their POSTs answered with (each its coordinating node's), never a part's id on another
    /// node. One owner (`id:phone`) reaches two coordinators when one of its requests carries an
    /// `Authorization` (nginx hashes on it; thumbd, given no keys, ignores it): each node then
    /// holds parts of the other node's job, and the node the stop reaches lists both jobs whole.
    @Test func stopAllListsTheCallersJobIDsNotThoseOfParts() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx, bulkFolders: 20)   // 138 photos: jobs that run a while
        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        let first = try #require(ring.owner(of: Array("client  phone".utf8)))
        let bearer = try #require((0..<100).map { "Bearer other\($0)" }.first { ring.owner(of: Array("client \($0) phone".utf8)) != first })
        let jobs = [try Self.startPrefetch(deployment, #"{"grid": "1", "format": "webp", "sort": "oldest", "start": 0, "end": 138}"#),
                    try Self.startPrefetch(deployment, #"{"grid": "3", "format": "webp", "sort": "oldest", "start": 0, "end": 138}"#,
                                           authorization: bearer)]
        let ids = try jobs.map { try #require($0["id"] as? Int) }
        let stopped = try TestClient.get(port: deployment.front, "/prefetch", method: "DELETE", headers: Self.client)
        #expect(stopped.status == 200)
        let listed = try #require(stopped.json["jobs"] as? [[String: Any]], "\(stopped.text)")
        let listedIDs = listed.map { $0["id"] as? Int ?? -1 }
        #expect(Set(listedIDs).isSubset(of: ids) && listedIDs.count == Set(listedIDs).count,
                "listed \(listedIDs); the caller's jobs are \(ids)")
        #expect(listedIDs.sorted() == ids.sorted(), "both jobs (still running: 138 renders each) are listed: \(stopped.text)")
        for job in listed {
            let counts = ["done", "skipped", "failed", "not_stored", "cancelled"].map { job[$0] as? Int ?? -1 }
            #expect(job["total"] as? Int == 138 && counts.reduce(0, +) == 138 && job["state"] as? String != "running", "\(job)")
        }
    }

    /// (c) of the issue: a repeated workload's hit ratio over three nodes behind nginx is one
    /// node's: every key is cached on exactly one node, so a repeat finds it.
    @Test func aRepeatedWorkloadHitsAsOnOneNode() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        let urls = try ["1", "3", "5"].flatMap { try Self.thumbnails(deployment, grid: $0).map(\.url) }
        // Three rounds over the 54 keys, each in another order: 162 requests, 54 first asks.
        var workload: [String] = []
        var generator = SplitMix(state: 18)
        for _ in 0..<3 { workload += urls.shuffled(using: &generator) }
        func hitRatio(port: UInt16) throws -> Double {
            var hits = 0
            for url in workload {
                let response = try TestClient.get(port: port, url)
                #expect(response.status == 200)
                if response.header("X-Cache")?.hasPrefix("HIT") == true { hits += 1 }
            }
            return Double(hits) / Double(workload.count)
        }
        let cluster = try hitRatio(port: deployment.front)
        // One node alone: node1.json without peers, on a port and a cache of its own.
        let port = try #require(LoopbackPorts.free(1)?.first, "no free loopback port")
        var config = try NginxDeploymentTests.nodeConfig(index: 0, nodes: deployment.nodes, library: deployment.library,
                                                        cache: deployment.dir.path + "/cache-single")
        config["peers"] = nil
        config["node"] = nil
        config["port"] = Int(port)
        deployment.dir.write("single.json", Array(try JSONSerialization.data(withJSONObject: config)))
        let pid = try #require(Deployment.spawnLogged(deployment.dir.path + "/single.log",
                                                      [ExecutableTests.binary, "--config", deployment.dir.path + "/single.json"]))
        defer { _ = ChildProcess.stop(pid) }
        let deadline = Date().addingTimeInterval(30)
        while (try? TestClient.get(port: port, "/assets?limit=1"))?.status != 200 && Date() < deadline { usleep(50_000) }
        let single = try hitRatio(port: port)
        // Both are the share of repeats, 108 of 162: each key's first ask is its only miss.
        #expect(abs(single - 108.0 / 162.0) < 1e-9, "one node's hit ratio \(single)")
        #expect(abs(cluster - single) <= 0.02, "3 nodes \(cluster), one node \(single)")
    }

    /// (d) of the issue: a node killed moves only its keys, to the next point (where a prefetch
    /// sent meanwhile warms them too), nothing errors, and its keys come back to it with it.
    @Test func aNodeDownMovesOnlyItsKeysAndTheyComeBack() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        let photos = try Self.thumbnails(deployment, grid: "3")
        for photo in photos { #expect(try TestClient.get(port: deployment.front, photo.url).status == 200) }
        let owners = photos.map { ring.owner(of: Array($0.path.utf8))! }
        // The node owning the most keys goes down (killed). A response leaves before its render
        // is stored on disk: wait until no node has a flight left, so that what the node keeps
        // through its restart is every key it served (once, a test that did not wait found one
        // missing after the restart).
        let down = (0..<3).max { a, b in owners.filter { $0 == a }.count < owners.filter { $0 == b }.count }!
        #expect(eventually { deployment.stats().allSatisfy { (($0?["renders"] as? [String: Any])?["flights"] as? Int) == 0 } })
        deployment.stopNode(down)
        let before = Self.renders(deployment.stats())
        var moved = 0
        for (photo, owner) in zip(photos, owners) {
            let response = try TestClient.get(port: deployment.front, photo.url)
            #expect(response.status == 200, "\(photo.path): \(response.status) with node \(down + 1) down")
            let hit = response.header("X-Cache")?.hasPrefix("HIT") == true
            if owner == down { moved += hit ? 0 : 1 } else { #expect(hit, "\(photo.path) moved off node \(owner + 1)") }
        }
        #expect(moved == owners.filter { $0 == down }.count && moved > 0)
        let after = Self.renders(deployment.stats())
        for node in 0..<3 where node != down {
            let next = owners.indices.filter { owners[$0] == down && ring.owner(of: Array(photos[$0].path.utf8)) { $0 == down } == node }
            #expect(after[node] - before[node] == next.count, "node \(node + 1) rendered \(after[node] - before[node])")
        }

        // A prefetch sent while it is down warms the node nginx now sends its keys to.
        let started = try Self.startPrefetch(deployment, #"{"grid": "5", "sort": "oldest", "start": 0, "end": 18}"#)
        let job = try Self.finished(deployment, job: try #require(started["id"] as? Int))
        #expect(job["total"] as? Int == 18 && job["done"] as? Int == 18, "\(job)")
        for photo in try Self.thumbnails(deployment, grid: "5") {
            let response = try TestClient.get(port: deployment.front, photo.url)
            #expect(response.status == 200 && response.header("X-Cache")?.hasPrefix("HIT") == true,
                    "\(photo.path): \(response.header("X-Cache") ?? "-") after a prefetch with node \(down + 1) down")
        }

        // Back: once nginx's fail_timeout (10 s, the shipped file's) has passed, its keys go to
        // it again, and hit the cache it kept.
        try deployment.restartNode(down)
        usleep(10_500_000)
        let rendersBack = Self.renders(deployment.stats())
        for (photo, owner) in zip(photos, owners) {
            let response = try TestClient.get(port: deployment.front, photo.url)
            #expect(response.status == 200 && response.header("X-Cache")?.hasPrefix("HIT") == true,
                    "\(photo.path) (node \(owner + 1)): \(response.status) \(response.header("X-Cache") ?? "-")")
        }
        #expect(Self.renders(deployment.stats()) == rendersBack)
        let hitsOnDown = (deployment.stats()[down]?["disk_cache"] as? [String: Any])?["hits"] as? Int ?? 0
        #expect(hitsOnDown >= owners.filter { $0 == down }.count, "node \(down + 1) served \(hitsOnDown) disk hits since it came back")
    }

    /// Issue 31, item 6: a node killed and started again is warmed by a prefetch as soon as
    /// nginx routes to it again, though this node's own failed call to it (a forward) came later
    /// than nginx's (its fail_timeout, 10 s, ended first). Each of the node's photos fetched
    /// after the prefetch is a hit on it.
    @Test func aNodeBackIsWarmedByAPrefetchOnceNginxRoutesToIt() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        let photos = try Self.thumbnails(deployment, grid: "3")
        let owners = photos.map { ring.owner(of: Array($0.path.utf8))! }
        // The client's jobs go to the node nginx hashes "client  phone" to (thumbd_by_client's
        // key, no Authorization): that node forwards. Another one, owning the most photos, dies.
        let coordinator = try #require(ring.owner(of: Array("client  phone".utf8)))
        let down = (0..<3).filter { $0 != coordinator }.max { a, b in owners.filter { $0 == a }.count < owners.filter { $0 == b }.count }!
        let itsPhoto = photos[try #require(owners.firstIndex(of: down))]
        deployment.stopNode(down)

        // nginx fails it (a GET for one of its photos, served by the next node), and the
        // coordinator 4 s later (a prefetch, whose forward to it is refused).
        #expect(try TestClient.get(port: deployment.front, itsPhoto.url).status == 200)
        let nginxFailed = Date()
        usleep(4_000_000)
        let meanwhile = try Self.startPrefetch(deployment, #"{"grid": "5", "sort": "oldest", "start": 0, "end": 18}"#)
        _ = try Self.finished(deployment, job: try #require(meanwhile["id"] as? Int))
        let forwardFailed = Date()
        try deployment.restartNode(down)
        let restarted = Date()

        // Until nginx sends it a GET again (at most 20 s after its failure: fail_timeout is 10 s):
        // the node's memory cache counts a lookup.
        func lookups() -> Int {
            let memory = deployment.stats()[down]?["memory_cache"] as? [String: Any]
            return (memory?["hits"] as? Int ?? 0) + (memory?["misses"] as? Int ?? 0)
        }
        var back: Date?
        while back == nil && Date().timeIntervalSince(nginxFailed) < 20 {
            #expect(try TestClient.get(port: deployment.front, itsPhoto.url).status == 200)
            if lookups() > 0 { back = Date() } else { usleep(100_000) }
        }
        let routed = try #require(back, "nginx did not send node \(down + 1) a GET within 20 s of its failure")

        // At once, a prefetch of grid 1 (cached nowhere yet); then every photo's GET is a hit.
        let job = try Self.startPrefetch(deployment, #"{"grid": "1", "sort": "oldest", "start": 0, "end": 18}"#)
        let delay = Date().timeIntervalSince(routed)
        let final = try Self.finished(deployment, job: try #require(job["id"] as? Int))
        #expect(final["total"] as? Int == 18 && final["done"] as? Int == 18, "\(final)")
        var hits = 0
        for photo in try Self.thumbnails(deployment, grid: "1") {
            let response = try TestClient.get(port: deployment.front, photo.url)
            #expect(response.status == 200)
            if response.header("X-Cache")?.hasPrefix("HIT") == true { hits += 1 }
        }
        let timeline = String(format: "nginx failed node %d at 0 s, the coordinator's forward by %.1f s, restarted by %.1f s, "
                              + "nginx routed to it at %.1f s, prefetch %.2f s after that",
                              down + 1, forwardFailed.timeIntervalSince(nginxFailed), restarted.timeIntervalSince(nginxFailed),
                              routed.timeIntervalSince(nginxFailed), delay)
        #expect(hits == photos.count, "\(hits) of \(photos.count) hits (node \(down + 1) owns \(owners.filter { $0 == down }.count)); \(timeline)")
        print("aNodeBackIsWarmedByAPrefetchOnceNginxRoutesToIt: \(hits) of \(photos.count) hits; \(timeline)")
    }

    /// A node that hangs (SIGSTOP: its socket still accepts, nothing answers) rather than dies:
    /// a forward to it waits `peer_timeout_seconds` once, then it is marked down (for
    /// `peer_down_seconds`), its items go to the next point, and later calls (a stop-all) pass it
    /// over at once.
    @Test func aHungNodeCostsOneTimeoutThenIsPassedOver() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        // A timeout long beside what a loaded machine adds to a forward, so that "waited it out"
        // and "did not wait" are told apart by time without a race (2 s, the shipped value, was
        // too close under the whole suite's load), and a node down for longer than the test.
        let timeout = 5.0
        let deployment = try Deployment(nginx: nginx, settings: ["peer_timeout_seconds": timeout, "peer_down_seconds": 120.0])
        // Which node takes this client's jobs: the one that forwards.
        let first = try Self.startPrefetch(deployment, #"{"grid": "5", "sort": "oldest", "start": 0, "end": 18}"#)
        _ = try Self.finished(deployment, job: try #require(first["id"] as? Int))
        let coordinator = try #require(Self.forwarded(deployment).firstIndex { $0 > 0 })
        let hung = (coordinator + 1) % 3
        kill(deployment.pids[hung], SIGSTOP)
        defer { kill(deployment.pids[hung], SIGCONT) }

        let started = Date()
        let job = try Self.startPrefetch(deployment, #"{"grid": "3", "sort": "oldest", "start": 0, "end": 18}"#)
        let took = Date().timeIntervalSince(started)
        #expect(took >= timeout - 0.1 && took < 3 * timeout, "the forward to the hung node took \(took) s (peer_timeout_seconds \(timeout))")
        let final = try Self.finished(deployment, job: try #require(job["id"] as? Int))
        #expect(final["total"] as? Int == 18 && final["done"] as? Int == 18, "\(final)")   // its items rendered elsewhere
        let node = try #require(TestClient.get(port: deployment.nodes[coordinator], "/stats").json["node"] as? [String: Any])
        #expect(node["failed_forwards"] as? Int == 1)
        let peers = try #require(node["peers"] as? [[String: Any]])
        #expect(peers.map { $0["down"] as? Bool } == (0..<3).map { $0 == hung })

        let stopping = Date()
        let stopped = try TestClient.get(port: deployment.front, "/prefetch", method: "DELETE", headers: Self.client)
        #expect(stopped.status == 200)
        #expect(Date().timeIntervalSince(stopping) < timeout - 0.5, "stop-all waited for the node marked down (peer_timeout_seconds \(timeout))")
        // Nor did it try the node: a try would have failed a second forward.
        let after = try #require(TestClient.get(port: deployment.nodes[coordinator], "/stats").json["node"] as? [String: Any])
        #expect(after["failed_forwards"] as? Int == 1)
    }

    /// A part whose node stops answering (SIGSTOP while it renders) does not keep its job
    /// running: the next GET finds it lost (its outstanding items failed) and the job ends; and
    /// a stop-all lists a job whose own items had ended while a part still ran.
    @Test func aJobWhosePartsNodeHangsStillEnds() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx, bulkFolders: 20)   // 138 photos: parts that run a while
        let first = try Self.startPrefetch(deployment, #"{"grid": "5", "sort": "oldest", "start": 0, "end": 18}"#)   // 18: some surely elsewhere
        _ = try Self.finished(deployment, job: try #require(first["id"] as? Int))
        let coordinator = try #require(Self.forwarded(deployment).firstIndex { $0 > 0 }, "nothing forwarded")
        let hung = (coordinator + 1) % 3

        let job = try Self.startPrefetch(deployment, #"{"grid": "1", "format": "webp", "sort": "oldest", "start": 0, "end": 138}"#)
        kill(deployment.pids[hung], SIGSTOP)
        defer { kill(deployment.pids[hung], SIGCONT) }
        let id = try #require(job["id"] as? Int)
        let final = try Self.finished(deployment, job: id)
        let counts = ["done", "skipped", "failed", "not_stored", "cancelled"].map { final[$0] as? Int ?? -1 }
        #expect(final["state"] as? String == "done" && final["total"] as? Int == 138 && counts.reduce(0, +) == 138, "\(final)")
        #expect((final["failed"] as? Int ?? 0) > 0, "the hung node's part ended before it was stopped: \(final)")

        // Another job, its part on the third node (the first is marked down now: it gets no
        // part), which hangs next: stop-all lists the job, final, the hung part cancelled.
        kill(deployment.pids[hung], SIGCONT)
        let third = (coordinator + 2) % 3
        let other = try Self.startPrefetch(deployment, #"{"grid": "3", "format": "webp", "sort": "oldest", "start": 0, "end": 138}"#)
        kill(deployment.pids[third], SIGSTOP)
        defer { kill(deployment.pids[third], SIGCONT) }
        // Until the coordinator's own items have all ended (its job is done there).
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let stats = try TestClient.get(port: deployment.nodes[coordinator], "/stats").json
            let renders = stats["renders"] as? [String: Any], prefetch = stats["prefetch"] as? [String: Any]
            if prefetch?["queued"] as? Int == 0 && renders?["in_flight"] as? Int == 0 { break }
            usleep(50_000)
        }
        let stopped = try TestClient.get(port: deployment.front, "/prefetch", method: "DELETE", headers: Self.client)
        let jobs = try #require(stopped.json["jobs"] as? [[String: Any]], "\(stopped.text)")
        let listed = try #require(jobs.first { $0["id"] as? Int == other["id"] as? Int }, "stop-all did not list job \(other): \(stopped.text)")
        let stoppedCounts = ["done", "skipped", "failed", "not_stored", "cancelled"].map { listed[$0] as? Int ?? -1 }
        #expect(listed["state"] as? String == "cancelled" && stoppedCounts.reduce(0, +) == 138, "\(listed)")
    }
}
