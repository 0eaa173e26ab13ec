import Cluster

/// The cluster's nginx upstream as the config gives it (`peers`, `node`), read into
/// `PeerRing.Peer`s: each address exactly as nginx has it (the text nginx's consistent hash
/// hashes, so it must match byte for byte) and its `weight=` (nginx's default 1).
enum ClusterPeers {
    /// `entry` of `peers`: `ADDRESS` or `ADDRESS weight=N` (other nginx parameters, such as
    /// `max_fails=`, are the balancer's and are ignored). Throws a `ConfigError` naming `peers`
    /// for an empty address, an unknown word, a weight below 1 or a control character.
    static func parse(_ entry: String) throws(ConfigError) -> PeerRing.Peer {
        // An address is hashed, sent as a Host field and printed as a metric label: no control
        // characters (a JSON string could carry "\n").
        guard !entry.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
            throw ConfigError("key 'peers': an entry holds a control character; each is a server line's ADDRESS [weight=N]")
        }
        let words = entry.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let server = words.first else {
            throw ConfigError("key 'peers': an entry is empty; each is a server line's ADDRESS [weight=N]")
        }
        var peer = PeerRing.Peer(server: server)
        for word in words.dropFirst() {
            if word.hasPrefix("weight=") {
                guard let weight = Int(word.dropFirst(7)), weight >= 1 else {
                    throw ConfigError("key 'peers': '\(entry)' needs a weight of at least 1 (nginx's weight=N)")
                }
                peer.weight = weight
            } else if !["max_fails=", "fail_timeout=", "max_conns="].contains(where: word.hasPrefix) {
                throw ConfigError("key 'peers': '\(entry)': '\(word)' is not a server parameter thumbd knows (weight=N)")
            }
        }
        return peer
    }

    /// `config`'s peers and the index of its `node` among them; nil for a single node (no
    /// `peers`, no `node`). Throws a `ConfigError` naming the key when an entry does not parse, an
    /// address repeats, `node` is not among `peers`, or `node` is given without `peers`.
    static func node(_ config: Config) throws(ConfigError) -> (peers: [PeerRing.Peer], node: Int)? {
        if config.peers.isEmpty {
            guard config.node.isEmpty else {
                throw ConfigError("key 'node' ('\(config.node)') needs 'peers', the upstream's server lines it is one of")
            }
            return nil
        }
        var peers: [PeerRing.Peer] = []
        for entry in config.peers {
            let peer = try parse(entry)
            guard !peers.contains(where: { $0.server == peer.server }) else {
                throw ConfigError("key 'peers': '\(peer.server)' is given twice")
            }
            peers.append(peer)
        }
        guard let node = peers.firstIndex(where: { $0.server == config.node }) else {
            throw ConfigError("key 'node' ('\(config.node)') must be one of 'peers' ("
                + peers.map(\.server).joined(separator: ", ") + "), spelled as there")
        }
        return (peers, node)
    }
}
