@testable import Cluster
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The shipped deployment, `config/nginx/thumbd.conf` and `config/nginx/node1.json`, run as it is
/// on loopback: only its ports are moved to free ones (and the node config's paths to a temporary
/// directory). A real nginx (Debian's `nginx-light`, installed by `.ci/run`) in front of three
/// real `thumbd` processes, each with its own cache directory, over one library of fixture
/// photos; everything is asked over HTTP through nginx, and each node's `/stats` is read on the
/// node itself.
@Suite(.serialized) struct NginxDeploymentTests {
    static let shippedConf = Paths.packageRoot + "/config/nginx/thumbd.conf"
    static let shippedNode = Paths.packageRoot + "/config/nginx/node1.json"

    /// The library: every fixture photo under three folders, one with a space and one with a
    /// non-ASCII name (NFC), so that the hash key is the decoded path and 18 photos spread.
    static let folders = ["2024", "album 1", "Été"]

    /// The shipped nginx file with its front port (`listen 8080;`, bound to loopback here) and
    /// its three nodes (`127.0.0.1:8081`...`8083`) moved to `front` and `nodes`. Each shipped
    /// spelling must be there, so that a change to the file is a failure here, not a test of
    /// something else.
    static func rewrittenConf(front: UInt16, nodes: [UInt16]) throws -> String {
        var text = try String(contentsOfFile: shippedConf, encoding: .utf8)
        try #require(text.contains("listen 8080;"), "thumbd.conf has no 'listen 8080;'")
        text = text.replacingOccurrences(of: "listen 8080;", with: "listen 127.0.0.1:\(front);")
        for (i, port) in nodes.enumerated() {
            try #require(text.contains("server 127.0.0.1:\(8081 + i) "), "thumbd.conf has no server 127.0.0.1:\(8081 + i)")
            text = text.replacingOccurrences(of: "127.0.0.1:\(8081 + i)", with: "127.0.0.1:\(port)")
        }
        return text
    }

    /// node1.json made into node `index`'s config: its peers' and node's ports moved as the nginx
    /// file's are, its own port, library and cache directory, and the thumbhash backfill off
    /// (nothing but the test's requests renders, so a node's `renders.total` counts them).
    /// `settings`: options set over the shipped file's (`peer_timeout_seconds`...).
    static func nodeConfig(index: Int, nodes: [UInt16], library: String, cache: String,
                           settings: [String: Any] = [:]) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: shippedNode))
        var config = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let peers = try #require(config["peers"] as? [String])
        try #require(peers.count == 3 && config["node"] as? String == "127.0.0.1:8081" && config["port"] as? Int == 8081)
        config["peers"] = peers.map { peer in
            nodes.indices.reduce(peer) { $0.replacingOccurrences(of: "127.0.0.1:\(8081 + $1)", with: "127.0.0.1:\(nodes[$1])") }
        }
        config["node"] = "127.0.0.1:\(nodes[index])"
        config["port"] = Int(nodes[index])
        config["library"] = library
        config["cache_dir"] = cache
        config["thumbhash_backfill"] = false
        config.merge(settings) { _, given in given }
        return config
    }

    /// nginx and three thumbd nodes, stopped when the value goes away.
    final class Deployment {
        let dir = TemporaryDirectory("thumbd-deploy")
        let front: UInt16
        let nodes: [UInt16]
        var pids: [pid_t] = []

        var library: String { dir.path + "/library" }

        /// `bulkFolders` more folders of the fixture photos (`bulk 1`...), for a job that runs a while.
        /// `settings`: options each node gets over the shipped node file's.
        init(nginx: String, bulkFolders: Int = 0, settings: [String: Any] = [:]) throws {
            let ports = try #require(LoopbackPorts.free(4), "no free loopback ports")
            front = ports[0]
            nodes = Array(ports[1...])
            for folder in NginxDeploymentTests.folders + (0..<bulkFolders).map({ "bulk \($0 + 1)" }) {
                for name in Paths.files(in: Paths.fixturePhotos) {
                    dir.write("library/\(folder)/\(name)", Array(Fixtures.photo(name)))
                }
            }
            for i in nodes.indices {
                let config = try NginxDeploymentTests.nodeConfig(index: i, nodes: nodes, library: library,
                                                                cache: dir.path + "/cache\(i + 1)",
                                                                settings: settings)
                dir.write("node\(i + 1).json", Array(try JSONSerialization.data(withJSONObject: config)))
                pids.append(try spawnNode(i))
            }
            dir.write("thumbd.conf", Array(try NginxDeploymentTests.rewrittenConf(front: front, nodes: nodes).utf8))
            dir.write("nginx.conf", Array(Self.mainConf(dir.path).utf8))
            pids.append(try #require(Self.spawnLogged(dir.path + "/nginx.out", [nginx] + Self.nginxArguments(dir.path)
                                                          + ["-g", "daemon off; master_process off;"]), "nginx did not start"))
            // Ready: every node's index has had its first scan (/assets 503 until then), and nginx answers.
            let deadline = Date().addingTimeInterval(30)
            for port in nodes + [front] {
                while (try? TestClient.get(port: port, "/assets?limit=1"))?.status != 200 && Date() < deadline { usleep(50_000) }
                try #require((try? TestClient.get(port: port, "/assets?limit=1"))?.status == 200,
                             "port \(port) does not answer: \(logs)")
            }
        }

        deinit { pids.reversed().forEach { if $0 > 0 { _ = ChildProcess.stop($0) } } }

        /// Starts node `index` (0-based) from its config, logging to `node{index + 1}.log`.
        private func spawnNode(_ index: Int) throws -> pid_t {
            try #require(Self.spawnLogged(dir.path + "/node\(index + 1).log",
                                          [ExecutableTests.binary, "--config", dir.path + "/node\(index + 1).json"]),
                         "thumbd node \(index + 1) did not start")
        }

        /// Stops node `index` (SIGTERM, then waits for it): it no longer accepts connections.
        func stopNode(_ index: Int) {
            _ = ChildProcess.stop(pids[index])
            pids[index] = 0
        }

        /// Starts node `index` again over its cache directory, and waits until it lists the library.
        func restartNode(_ index: Int) throws {
            pids[index] = try spawnNode(index)
            let deadline = Date().addingTimeInterval(30)
            while (try? TestClient.get(port: nodes[index], "/assets?limit=1"))?.status != 200 && Date() < deadline { usleep(50_000) }
            try #require((try? TestClient.get(port: nodes[index], "/assets?limit=1"))?.status == 200, "node \(index + 1): \(logs)")
        }

        /// Each node's `/stats`, in node order, read on the node itself (nil for a stopped node).
        func stats() -> [[String: Any]?] {
            nodes.indices.map { pids[$0] > 0 ? try? TestClient.get(port: nodes[$0], "/stats").json : nil }
        }

        /// What nginx and the nodes wrote, for a failure's message.
        var logs: String {
            ["error.log", "nginx.out", "node1.log", "node2.log", "node3.log"].map { name in
                name + ": " + ((try? String(contentsOfFile: dir.path + "/" + name, encoding: .utf8)) ?? "")
            }.joined(separator: "\n")
        }

        /// Each node's `renders.total`, in node order, read on the node itself.
        func renders() throws -> [Int] {
            try nodes.map { port in
                let stats = try TestClient.get(port: port, "/stats").json
                return try #require((stats["renders"] as? [String: Any])?["total"] as? Int, "no renders.total on \(port)")
            }
        }

        /// The nginx.conf around the shipped file, as a distribution's is around conf.d: the
        /// `include` in `http`, and the paths nginx writes to under the temporary directory.
        static func mainConf(_ dir: String) -> String {
            """
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(dir)/body; proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi; uwsgi_temp_path \(dir)/uwsgi; scgi_temp_path \(dir)/scgi;
                include \(dir)/thumbd.conf;
            }
            """
        }

        static func nginxArguments(_ dir: String) -> [String] {
            ["-p", dir, "-c", dir + "/nginx.conf", "-e", dir + "/error.log"]
        }

        /// Spawns `arguments` with stdout and stderr to `log` and no descriptor but those
        /// (through a small python3 step, as ExecutableTests.launch does: a child of the test
        /// process would inherit other tests' sockets).
        static func spawnLogged(_ log: String, _ arguments: [String]) -> pid_t? {
            ChildProcess.spawn(["/usr/bin/python3", "-c", """
                import os, sys
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, 1); os.dup2(fd, 2); os.closerange(3, 1 << 16)
                os.execv(sys.argv[2], sys.argv[2:])
                """, log] + arguments)
        }
    }

    @Test func nginxAcceptsTheShippedFile() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let dir = TemporaryDirectory("thumbd-deploy-t")
        let ports = try #require(LoopbackPorts.free(4), "no free loopback ports")
        dir.write("thumbd.conf", Array(try Self.rewrittenConf(front: ports[0], nodes: Array(ports[1...])).utf8))
        dir.write("nginx.conf", Array(Deployment.mainConf(dir.path).utf8))
        let pid = try #require(Deployment.spawnLogged(dir.path + "/t.out", [nginx, "-t"] + Deployment.nginxArguments(dir.path)))
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: dir.path + "/t.out", encoding: .utf8)) ?? ""
        #expect(status == 0, "nginx -t: \(output)")
        #expect(output.contains("test is successful"), "\(output)")
    }

    /// Each photo's grids 1, 3 and 5, asked through nginx at the URLs `/assets` lists (through
    /// nginx too), are rendered by one node: the one whose `renders.total` grew by 3 while the
    /// others stayed, and the one PeerRing names from node1.json's `peers`; a second round is
    /// all hits and renders nothing. The 18 photos land on more than one node.
    @Test func everyGridOfAPhotoIsRenderedByOneNode() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        let listing = try TestClient.get(port: deployment.front, "/assets?sort=oldest&limit=100")
        #expect(listing.status == 200)
        let items = try #require(listing.json["items"] as? [[String: Any]])
        let photos = Paths.files(in: Paths.fixturePhotos)
        #expect(listing.json["total"] as? Int == Self.folders.count * photos.count)
        #expect(Set(items.compactMap { $0["path"] as? String })
                == Set(Self.folders.flatMap { folder in photos.map { folder + "/" + $0 } }))

        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        var owners: [String: Int] = [:]
        var before = try deployment.renders()
        #expect(before == [0, 0, 0], "\(deployment.logs)")
        for item in items {
            let path = try #require(item["path"] as? String)
            let thumbnails = try #require(item["thumbnails"] as? [String: String])
            for grid in ["1", "3", "5"] {
                let url = try #require(thumbnails[grid])
                let response = try TestClient.get(port: deployment.front, url)
                #expect(response.status == 200 && response.header("X-Cache") == "MISS", "\(url): \(response.status)")
            }
            let after = try deployment.renders()
            let grew = deployment.nodes.indices.filter { after[$0] != before[$0] }
            #expect(grew.count == 1 && after[grew[0]] - before[grew[0]] == 3, "\(path): renders \(before) → \(after)")
            if grew.count == 1 {
                owners[path] = grew[0]
                #expect(ring.owner(of: Array(path.utf8)) == grew[0], "\(path): rendered on node \(grew[0] + 1)")
            }
            before = after
        }
        #expect(owners.count == items.count)
        #expect(Set(owners.values).count >= 2, "every photo on one node: \(owners)")

        for item in items {
            let thumbnails = try #require(item["thumbnails"] as? [String: String])
            for grid in ["1", "3", "5"] {
                let response = try TestClient.get(port: deployment.front, try #require(thumbnails[grid]))
                #expect(response.status == 200 && response.header("X-Cache")?.hasPrefix("HIT") == true,
                        "\(thumbnails[grid] ?? ""): \(response.header("X-Cache") ?? "no X-Cache")")
            }
        }
        #expect(try deployment.renders() == before)
    }

    /// One client's listing and prefetch requests reach one node (`hash` on Authorization and
    /// Thumbd-Client-Id): the job it started through nginx (all 18 photos, which that node
    /// splits with their owners) is found whole by each of its later GETs through nginx, and the
    /// listing's `generation` is one node's each time. A job lives on the
    /// node that took it; least_conn or round robin would send most of these GETs elsewhere (404).
    @Test func aClientsPrefetchJobIsFoundThroughNginx() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        for client in ["phone-a", "phone-b", "phone-c", "phone-d"] {
            let id = ["Thumbd-Client-Id": client]
            let body = #"{"grid": "5", "sort": "oldest", "start": 0, "end": 18}"#
            let request = "POST /prefetch HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nThumbd-Client-Id: \(client)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            let started = try TestClient.parse(try TestClient.exchange(port: deployment.front, Array(request.utf8)))
            #expect(started.status == 202, "\(started.text)")
            let job = try #require(started.json["id"] as? Int, "\(started.text)")
            var clientGenerations: Set<Int> = []
            for _ in 0..<6 {
                let status = try TestClient.get(port: deployment.front, "/prefetch/\(job)", headers: id)
                #expect(status.status == 200 && status.json["id"] as? Int == job && status.json["total"] as? Int == 18,
                        "\(client): \(status.status) \(status.text)")
                let listing = try TestClient.get(port: deployment.front, "/assets?limit=1", headers: id)
                #expect(listing.status == 200)
                if let generation = listing.json["generation"] as? Int { clientGenerations.insert(generation) }
            }
            // Each node's generations start at its own opening time (µs) and count its changes
            // (its renders' placeholders among them): a client's are all one node's.
            let nodeGenerations = try deployment.nodes.map { try TestClient.get(port: $0, "/assets?limit=0").json["generation"] as? Int ?? 0 }
            let servedBy = Set(clientGenerations.map { generation in
                nodeGenerations.firstIndex { $0 >= generation && $0 - generation < 1_000 } ?? -1
            })
            #expect(servedBy.count == 1 && !servedBy.contains(-1), "\(client): generations \(clientGenerations), the nodes' now \(nodeGenerations)")
            // The job is on one node only: asked on each node itself, one has it whole (the
            // others may hold the parts it forwarded to them, of fewer items, under their own ids).
            let holders = try deployment.nodes.filter {
                try TestClient.get(port: $0, "/prefetch/\(job)", headers: id).json["total"] as? Int == 18
            }
            #expect(holders.count == 1, "\(client): job \(job) on \(holders)")
        }
    }

    /// What nginx answers itself (a path it cannot parse, a body over client_max_body_size) is
    /// in thumbd's JSON error form, with the status nginx chose; what a node answers passes
    /// through as the node said it.
    @Test func nginxsOwnErrorsAreThumbdsJSON() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx)
        for path in ["/thumbnails/3/a%00b", "/thumbnails/3/%ZZ", "/thumbnails/3/a%"] {
            let response = try TestClient.get(port: deployment.front, path)
            #expect(response.status == 400 && response.header("Content-Type") == "application/json", "\(path): \(response.text)")
            #expect(response.json["error"] as? String == "bad_request", "\(path): \(response.text)")
        }
        let body = String(repeating: " ", count: (1 << 20) + 1)
        let request = "POST /prefetch HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        let tooLarge = try TestClient.parse(try TestClient.exchange(port: deployment.front, Array(request.utf8)))
        #expect(tooLarge.status == 413 && tooLarge.json["error"] as? String == "payload_too_large", "\(tooLarge.text)")
        // A node's own 400 is not replaced: its message names the sort.
        let node = try TestClient.get(port: deployment.front, "/assets?sort=sideways")
        #expect(node.status == 400 && (node.json["message"] as? String ?? "").contains("sort"), "\(node.text)")
    }
}
