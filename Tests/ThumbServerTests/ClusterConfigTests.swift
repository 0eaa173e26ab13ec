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
        let cluster = try #require(try ClusterPeer.node(config(["127.0.0.1:8081", "127.0.0.1:8082 weight=2 max_fails=1"],
                                                              node: "127.0.0.1:8082")))
        #expect(cluster.peers == [ClusterPeer(server: "127.0.0.1:8081"), ClusterPeer(server: "127.0.0.1:8082", weight: 2)])
        #expect(cluster.node == 1)
    }

    @Test func aNodeNotAmongPeersADuplicateOrAZeroWeightIsRefused() {
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1", "b:2"], node: "c:3")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1", "a:1"], node: "a:1")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config(["a:1 weight=0", "b:2"], node: "b:2")) }
        #expect(throws: ConfigError.self) { try ConfigLoader.validate(config([], node: "b:2")) }
        #expect(throws: Never.self) { try ConfigLoader.validate(config([], node: "")) }
    }
}
