@testable import Cluster
import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `PeerRing` against nginx itself (Debian's `nginx-light`, installed by `.ci/run`): an nginx on
/// loopback hashes `/thumbnails/{grid}/{path}` on the decoded path (`map $uri`, `hash …
/// consistent`) over three upstream servers of weights 1, 1 and 2, each of them an nginx
/// `server` that answers its own name; for 1,000 paths with spaces, accents (NFC and NFD) and
/// other scripts, the server PeerRing names is the one that answered.
@Suite struct NginxRingTests {
    static let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The asset paths: 1,000 names over folders, some with spaces, accents, CJK and emoji.
    static let paths: [String] = (0..<1000).map { i in
        let folders = ["2024", "album 1", "Été", "E\u{0301}te\u{0301}", "日本の写真", "emoji 😀", "a+b&c=d", "x"]
        let names = ["IMG_\(i).jpg", "photo \(i).JPG", "café \(i).jpg", "写真\(i).heic", "\(i)"]
        return folders[i % folders.count] + "/" + names[(i / folders.count) % names.count]
    }

    /// Every byte outside RFC 3986's unreserved set and `/` percent-encoded.
    static func encoded(_ path: String) -> String {
        path.utf8.map { byte -> String in
            let c = Character(Unicode.Scalar(byte))
            if byte < 128 && (c.isLetter || c.isNumber || "-._~/".contains(c)) { return String(c) }
            return String(format: "%%%02X", byte)
        }.joined()
    }

    @Test func theOwnerIsTheServerNginxSendsTheRequestTo() throws {
        let nginx = try #require(Self.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let dir = TemporaryDirectory("thumbd-nginx")
        let ports = try #require(LoopbackPorts.free(4), "no free loopback ports")
        let front = ports[0], nodes = Array(ports[1...])
        let peers = [PeerRing.Peer(server: "127.0.0.1:\(nodes[0])"), PeerRing.Peer(server: "127.0.0.1:\(nodes[1])"),
                     PeerRing.Peer(server: "127.0.0.1:\(nodes[2])", weight: 2)]
        let conf = """
            pid \(dir.path)/nginx.pid;
            error_log \(dir.path)/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(dir.path)/body; proxy_temp_path \(dir.path)/proxy;
                fastcgi_temp_path \(dir.path)/fastcgi; uwsgi_temp_path \(dir.path)/uwsgi; scgi_temp_path \(dir.path)/scgi;
                map $uri $thumbnail_key { "~^/thumbnails/[^/]+/(?<asset>.+)$" $asset; default $uri; }
                upstream nodes {
                    hash $thumbnail_key consistent;
                    server \(peers[0].server); server \(peers[1].server); server \(peers[2].server) weight=2;
                }
                server { listen 127.0.0.1:\(front); location / { proxy_pass http://nodes; } }
                server { listen 127.0.0.1:\(nodes[0]); location / { return 200 "0"; } }
                server { listen 127.0.0.1:\(nodes[1]); location / { return 200 "1"; } }
                server { listen 127.0.0.1:\(nodes[2]); location / { return 200 "2"; } }
            }
            """
        dir.write("nginx.conf", Array(conf.utf8))
        let pid = try #require(ChildProcess.spawn([nginx, "-p", dir.path, "-c", dir.path + "/nginx.conf", "-e", dir.path + "/error.log",
                                                   "-g", "daemon off; master_process off;"]), "nginx did not start")
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let deadline = Date().addingTimeInterval(10)
        while (try? TestClient.get(port: front, "/thumbnails/3/x"))?.status != 200 && Date() < deadline { usleep(20_000) }
        let log = (try? String(contentsOfFile: dir.path + "/error.log", encoding: .utf8)) ?? ""
        try #require((try? TestClient.get(port: front, "/thumbnails/3/x"))?.status == 200, "nginx does not answer: \(log)")

        let ring = PeerRing(peers: peers)
        var answered = [0, 0, 0], mismatches: [String] = []
        for path in Self.paths {
            let response = try TestClient.get(port: front, "/thumbnails/3/" + Self.encoded(path))
            let server = try #require(Int(response.text), "\(path): \(response.status) \(response.text)")
            answered[server] += 1
            if ring.owner(of: Array(path.utf8)) != server { mismatches.append(path) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of 1,000 owned elsewhere, e.g. \(mismatches.prefix(3))")
        // Weight 2 gets about half the keys, each weight-1 server about a quarter.
        #expect(answered.allSatisfy { $0 > 150 } && answered[2] > answered[0] && answered[2] > answered[1], "\(answered)")
    }

    @Test func aServerDownPassesItsKeysOnAndTheOthersKeepTheirs() {
        let ring = PeerRing(peers: [.init(server: "10.0.0.1:8080"), .init(server: "10.0.0.2:8080"), .init(server: "10.0.0.3:8080")])
        var moved = 0, kept = 0
        for path in Self.paths {
            let key = Array(path.utf8)
            let owner = ring.owner(of: key)!
            let without = ring.owner(of: key) { $0 == 1 }!
            #expect(without != 1)
            if owner == 1 { moved += 1 } else { kept += without == owner ? 1 : 0 }
        }
        #expect(kept == 1000 - moved && moved > 200 && moved < 450, "moved \(moved)")   // only the down server's third moves
        #expect(ring.owner(of: Array("x".utf8)) { _ in true } == nil)
    }

    @Test func serverStringsSplitAsNginxSplitsThem() {
        #expect(PeerRing.hostAndPort("127.0.0.1:8080") == (Array("127.0.0.1".utf8), Array("8080".utf8)))
        #expect(PeerRing.hostAndPort("node-a") == (Array("node-a".utf8), []))
        #expect(PeerRing.hostAndPort("[::1]:81") == (Array("[::1]".utf8), Array("81".utf8)))
        #expect(PeerRing.hostAndPort("unix:/run/thumbd.sock") == (Array("/run/thumbd.sock".utf8), []))
        #expect(PeerRing.hostAndPort("host:8a") == (Array("host:8a".utf8), []))
        // zlib's CRC32 is the one nginx uses: the check value of "123456789" (IEEE 802.3).
        #expect(PeerRing.crc32(Array("123456789".utf8), continuing: 0) == 0xCBF4_3926)
    }
}
