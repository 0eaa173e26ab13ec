import Cluster

/// This node's place in a cluster of thumbd nodes behind nginx's consistent hash (config keys
/// `peers`, `node`, `peer_timeout_seconds`, `peer_down_seconds`; README "Cluster").
public struct ClusterSettings: Sendable {
    /// The nginx upstream's `server` lines, in their order: the ring every node computes alike.
    public var peers: [PeerRing.Peer]
    /// This node's index in `peers`.
    public var node: Int
    /// How long one node-to-node call may take, connect to last byte, ms (`peer_timeout_seconds`,
    /// 2 s by default).
    public var timeoutMilliseconds = 2_000
    /// nginx's `fail_timeout`, s (`peer_down_seconds`, 10 by default): how long a failed peer
    /// that answers probes again may still be passed over when nginx sends it no request
    /// (`PeerHealth`, rule 4).
    public var downSeconds = 10.0

    public init(peers: [PeerRing.Peer], node: Int) {
        self.peers = peers
        self.node = node
    }

    /// Every field given: what `Config` maps (a field added here and not there does not compile).
    public init(peers: [PeerRing.Peer], node: Int, timeoutMilliseconds: Int, downSeconds: Double) {
        self.peers = peers
        self.node = node
        self.timeoutMilliseconds = timeoutMilliseconds
        self.downSeconds = downSeconds
    }

    /// This node's address, as the upstream spells it.
    public var name: String { peers[node].server }
}
