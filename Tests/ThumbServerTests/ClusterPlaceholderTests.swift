@testable import Cluster
import Foundation
import Testing
import TestSupport

/// Placeholders over the shipped deployment (nginx and three thumbd processes, docs/cluster.md,
/// "Placeholders"): with the backfill on, each node makes the placeholders of the photos the ring
/// gives it, once, and takes the others' from its peers, so that a listing through any node
/// carries every photo's placeholder.
@Suite(.serialized) struct ClusterPlaceholderTests {
    typealias Deployment = NginxDeploymentTests.Deployment

    /// Every item of the listing on `port`, by path: its `thumbhash` (nil: none yet).
    static func placeholders(_ port: UInt16) throws -> [String: String?] {
        let listing = try TestClient.get(port: port, "/assets?sort=oldest&limit=10000")
        try #require(listing.status == 200)
        let items = try #require(listing.json["items"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: try items.map { item in
            (try #require(item["path"] as? String), item["thumbhash"] as? String)
        })
    }

    /// 150 photos (25 folders of the 6 fixtures), three nodes with the backfill on: once the
    /// cluster settles, the listing through nginx and through each node carries a placeholder
    /// for every photo, the same one everywhere; the placeholders made (beside renders, by the
    /// backfill, from previews) add up to 150 over the nodes, each node's being exactly the
    /// photos it owns, and each node took the rest from its peers. A node that starts again
    /// without its index takes them all again from its peers and makes only its own.
    @Test func everyListingCarriesEveryPlaceholderMadeOnceInTheCluster() throws {
        let nginx = try #require(NginxRingTests.nginx, "nginx is not installed (.ci/run installs nginx-light)")
        let deployment = try Deployment(nginx: nginx, bulkFolders: 22, settings: ["thumbhash_backfill": true])
        let photos = (NginxDeploymentTests.folders.count + 22) * Paths.files(in: Paths.fixturePhotos).count
        #expect(photos == 150)
        let ports = deployment.nodes + [deployment.front]

        var listings: [[String: String?]] = []
        let settled = try eventually(within: 180) {
            usleep(500_000)
            listings = try ports.map(Self.placeholders)
            return listings.allSatisfy { $0.count == photos && $0.values.allSatisfy { $0 != nil } }
        }
        let missing = listings.map { $0.values.count { $0 == nil } }
        #expect(settled, "placeholders missing per listing (nodes, then nginx): \(missing)\n\(deployment.logs)")
        #expect(Set(listings.map { $0.mapValues { $0 ?? "" } }).count == 1, "the nodes list different placeholders")

        let ring = PeerRing(peers: deployment.nodes.map { PeerRing.Peer(server: "127.0.0.1:\($0)") })
        let owned = deployment.nodes.indices.map { node in
            listings[0].keys.count { ring.owner(of: Array($0.utf8)) == node }
        }
        // Made counts settle with the listings; let any backfill pass under way end.
        usleep(2_500_000)
        let stats = try deployment.stats().map { try #require($0?["placeholders"] as? [String: Any]) }
        let made = stats.map { s in ["from_renders", "backfilled", "from_previews"].reduce(0) { $0 + (s[$1] as? Int ?? -1000) } }
        let taken = stats.map { $0["from_peers"] as? Int ?? -1 }
        print("placeholders made per node \(made) (owned \(owned)), taken from peers \(taken), sum made \(made.reduce(0, +)) of \(photos)")
        #expect(made.reduce(0, +) == photos, "made per node \(made)")
        #expect(made == owned, "made per node \(made), owned \(owned)")
        #expect(taken == owned.map { photos - $0 }, "taken from peers \(taken), owned \(owned)")

        // Node 2 loses its cache directory (its index with it) and starts again: it pulls every
        // peer from the start and makes only the placeholders of its own photos; the others make none.
        deployment.stopNode(1)
        try FileManager.default.removeItem(atPath: deployment.dir.path + "/cache2")
        try deployment.restartNode(1)
        var relisted: [String: String?] = [:]
        let back = try eventually(within: 120) {
            usleep(500_000)
            relisted = try Self.placeholders(deployment.nodes[1])
            return relisted.count == photos && relisted.values.allSatisfy { $0 != nil }
        }
        #expect(back, "after the restart, \(relisted.values.count { $0 == nil }) placeholders missing\n\(deployment.logs)")
        #expect(relisted.mapValues { $0 ?? "" } == listings[0].mapValues { $0 ?? "" })
        usleep(2_500_000)
        let after = try deployment.stats().map { try #require($0?["placeholders"] as? [String: Any]) }
        let madeAfter = after.map { s in ["from_renders", "backfilled", "from_previews"].reduce(0) { $0 + (s[$1] as? Int ?? -1000) } }
        let takenAfter = after.map { $0["from_peers"] as? Int ?? -1 }
        print("after node 2's restart without its index: made \(madeAfter), taken \(takenAfter)")
        #expect(madeAfter == owned, "made per node after the restart \(madeAfter), owned \(owned)")
        #expect(takenAfter == owned.map { photos - $0 }, "taken after the restart \(takenAfter), owned \(owned)")
    }
}
