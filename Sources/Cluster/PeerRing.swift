import CZlib

/// nginx's consistent-hash ring (`hash KEY consistent;` in an `upstream`), computed as nginx
/// computes it, so that a node knows which node nginx sends a key to (issue: prefetch that warms
/// the owner). From `ngx_http_upstream_hash_module.c` (nginx 1.22, `ngx_http_upstream_init_chash`
/// and `ngx_http_upstream_get_chash_peer`):
///
/// - each server gets 160 points per unit of weight; a server string `host:port` is split at
///   its last `:` when only digits follow (`unix:PATH` has no port); its base is CRC32 over the
///   host, one NUL byte and the port; point j is CRC32 over the base followed by the previous
///   point's hash as 4 little-endian bytes (0 for the first), as Cache::Memcached::Fast does;
/// - the points are sorted by hash and equal hashes kept once;
/// - a key's hash is CRC32 of its bytes; it goes to the first point whose hash is at or above
///   it, wrapping to the first point; a point whose server is down passes to the next point.
///
/// CRC32 is zlib's (`crc32(3)`, the same IEEE 802.3 polynomial as `ngx_crc32`), continued across
/// pieces as nginx's `ngx_crc32_update` does. The key must be the bytes nginx hashes: with the
/// deployment's `map $uri`, the asset path after the grid, percent-decoded (nginx's `$uri`).
public struct PeerRing: Sendable {
    /// One `server` line of the upstream: its address exactly as written there, and its weight.
    public struct Peer: Sendable, Equatable {
        /// `host:port` (or `unix:PATH`) as the `server` directive spells it: nginx hashes this text.
        public var server: String
        /// `weight=` (1 by default); 160 points per unit.
        public var weight: Int

        public init(server: String, weight: Int = 1) {
            self.server = server
            self.weight = weight
        }
    }

    /// The upstream's servers, in the order of its `server` lines.
    public let peers: [Peer]
    /// The points, sorted by hash: (hash, index into `peers`).
    let points: [(hash: UInt32, peer: Int)]

    /// The ring of `peers` (weights of at least 1).
    public init(peers: [Peer]) {
        self.peers = peers
        var points: [(hash: UInt32, peer: Int)] = []
        for (index, peer) in peers.enumerated() {
            let (host, port) = Self.hostAndPort(peer.server)
            var base = Self.crc32(host, continuing: 0)
            base = Self.crc32([0], continuing: base)
            base = Self.crc32(port, continuing: base)
            var previous: UInt32 = 0
            for _ in 0..<(max(1, peer.weight) * 160) {
                let bytes = withUnsafeBytes(of: previous.littleEndian) { Array($0) }
                let hash = Self.crc32(bytes, continuing: base)
                points.append((hash, index))
                previous = hash
            }
        }
        points.sort { $0.hash < $1.hash }
        var unique: [(hash: UInt32, peer: Int)] = []
        unique.reserveCapacity(points.count)
        for point in points where unique.last?.hash != point.hash { unique.append(point) }
        self.points = unique
    }

    /// The index in `peers` of the server nginx sends `key` to, passing over the servers
    /// `isDown` names as nginx passes over failed ones; nil when every server is down.
    public func owner(of key: some Collection<UInt8>, isDown: (Int) -> Bool = { _ in false }) -> Int? {
        guard !points.isEmpty else { return nil }
        let hash = Self.crc32(Array(key), continuing: 0)
        var low = 0, high = points.count
        while low < high {   // the first point at or above the key's hash
            let mid = (low + high) / 2
            if points[mid].hash < hash { low = mid + 1 } else { high = mid }
        }
        for step in 0..<points.count {
            let peer = points[(low + step) % points.count].peer
            if !isDown(peer) { return peer }
        }
        return nil
    }

    /// `server` split as nginx splits it: at the last `:` when only digits follow it.
    static func hostAndPort(_ server: String) -> (host: [UInt8], port: [UInt8]) {
        let bytes = Array(server.utf8)
        if bytes.count >= 5, String(decoding: bytes.prefix(5), as: UTF8.self).lowercased() == "unix:" {
            return (Array(bytes.dropFirst(5)), [])
        }
        var j = 0
        while j < bytes.count {
            let c = bytes[bytes.count - j - 1]
            if c == UInt8(ascii: ":") { return (Array(bytes[..<(bytes.count - j - 1)]), Array(bytes[(bytes.count - j)...])) }
            if c < UInt8(ascii: "0") || c > UInt8(ascii: "9") { break }
            j += 1
        }
        return (bytes, [])
    }

    /// zlib's CRC32 of `bytes` after `crc` (the CRC of what came before; 0 to start).
    /// Eight hex digits that tell two upstreams apart: CRC32 over each server line as
    /// `SERVER weight=N` and a newline, in order. Nodes given the same `peers` have the same
    /// fingerprint; nodes whose rings differ (a server missing, another order, another weight)
    /// almost surely do not, and would send items to owners nginx does not use.
    public var fingerprint: String {
        let text = peers.map { "\($0.server) weight=\($0.weight)\n" }.joined()
        let crc = Self.crc32(Array(text.utf8), continuing: 0)
        return String(crc, radix: 16).leftPadded(to: 8)
    }

    static func crc32(_ bytes: [UInt8], continuing crc: UInt32) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(CZlib.crc32(uLong(crc), buffer.baseAddress, uInt(buffer.count)))
        }
    }
}

extension String {
    /// This string with "0"s before it up to `count` characters.
    fileprivate func leftPadded(to count: Int) -> String {
        String(repeating: "0", count: Swift.max(0, count - self.count)) + self
    }
}
