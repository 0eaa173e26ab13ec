import Cluster
import Foundation
import Testing
@testable import ThumbServer

/// `peers` and `node` (issue 18): the upstream's server lines, and which one this node is.
@Suite struct ClusterConfigTests {
    func config(_ peers: [String], node: String) -> Config {
        var config = Config()
        config.library = "/p"
        config.peers = peers
        config.node = node
        return config
    }

    @Test func peersParseAsNginxSpellsThem() throws {
        let cluster = try #require(try ClusterPeers.node(config(["127.0.0.1:8081", "127.0.0.1:8082 weight=2 max_fails=1"],
                                                              node: "127.0.0.1:8082")))
        #expect(cluster.peers == [PeerRing.Peer(server: "127.0.0.1:8081"), PeerRing.Peer(server: "127.0.0.1:8082", weight: 2)])
        #expect(cluster.node == 1)
    }

    @Test func aNodeNotAmongPeersADuplicateOrAZeroWeightIsRefused() {
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1", "b:2"], node: "c:3")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1", "a:1"], node: "a:1")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1 weight=0", "b:2"], node: "b:2")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config([], node: "b:2")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1\n", "b:2"], node: "b:2")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1", "b:2\u{7F}"], node: "a:1")) }
        #expect(throws: Never.self) { try ConfigLoader.validate(config(["a:1\tweight=2", "b:2"], node: "b:2")) }
        #expect(throws: Never.self) { try ConfigLoader.validate(config([], node: "")) }
    }

    /// `/stats` and `/metrics` of a node name it by its `server` string, with every peer's
    /// weight; a single node says `null` and has no `thumbd_node_info`.
    @Test func statsAndMetricsNameTheNode() throws {
        let node = try ServerHarness { config in
            config.peers = ["127.0.0.1:9101", "127.0.0.1:9102 weight=2"]
            config.node = "127.0.0.1:9102"
        }
        let stats = try TestClient.get(port: node.port, "/stats").json
        let named = try #require(stats["node"] as? [String: Any])
        #expect(named["name"] as? String == "127.0.0.1:9102")
        let peers = try #require(named["peers"] as? [[String: Any]])
        #expect(peers.map { $0["server"] as? String } == ["127.0.0.1:9101", "127.0.0.1:9102"])
        #expect(peers.map { $0["weight"] as? Int } == [1, 2])
        let metrics = String(decoding: try TestClient.get(port: node.port, "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("\nthumbd_node_info{node=\"127.0.0.1:9102\"} 1\n"))

        let single = try ServerHarness()
        #expect(try TestClient.get(port: single.port, "/stats").json["node"] is NSNull)
        #expect(!String(decoding: try TestClient.get(port: single.port, "/metrics").body, as: UTF8.self).contains("thumbd_node_info"))
    }

    /// Two upstreams' fingerprints differ when their rings would (a server missing, another
    /// order or weight), and not otherwise.
    @Test func theUpstreamFingerprintTellsRingsApart() {
        let a = PeerRing(peers: [.init(server: "10.0.0.1:80"), .init(server: "10.0.0.2:80")])
        #expect(a.fingerprint.count == 8 && a.fingerprint.allSatisfy(\.isHexDigit))
        #expect(PeerRing(peers: [.init(server: "10.0.0.1:80"), .init(server: "10.0.0.2:80")]).fingerprint == a.fingerprint)
        for other in [[PeerRing.Peer(server: "10.0.0.1:80")],
                      [.init(server: "10.0.0.2:80"), .init(server: "10.0.0.1:80")],
                      [.init(server: "10.0.0.1:80"), .init(server: "10.0.0.2:80", weight: 2)]] {
            #expect(PeerRing(peers: other).fingerprint != a.fingerprint, "\(other)")
        }
    }

    /// A call from a node given other peers is counted in `/stats` `node.peer_list_mismatches`
    /// (and warned about); one from a node with the same peers, or from a client, is not.
    @Test func aCallFromANodeWithOtherPeersIsCounted() throws {
        let peers = ["127.0.0.1:9101", "127.0.0.1:9102 weight=2"]
        let node = try ServerHarness { config in
            config.peers = peers
            config.node = "127.0.0.1:9102"
        }
        let ours = PeerRing(peers: [.init(server: "127.0.0.1:9101"), .init(server: "127.0.0.1:9102", weight: 2)]).fingerprint
        func mismatches() throws -> Int? {
            (try TestClient.get(port: node.port, "/stats").json["node"] as? [String: Any])?["peer_list_mismatches"] as? Int
        }
        let body = #"{"grid": "3", "paths": ["Landscape_1.jpg"]}"#
        #expect(try node.post("/prefetch", body, headers: ["Thumbd-Forwarded": "1", "Thumbd-Peers": ours]).status == 202)
        #expect(try node.post("/prefetch", body).status == 202)
        #expect(try mismatches() == 0)
        for _ in 0..<2 {
            #expect(try node.post("/prefetch", body, headers: ["Thumbd-Forwarded": "1", "Thumbd-Peers": "0badc0de"]).status == 202)
        }
        #expect(try mismatches() == 2)
        let metrics = String(decoding: try TestClient.get(port: node.port, "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("\nthumbd_peer_list_mismatches_total 2\n"))
    }
}
