import HTTP

/// An address range in CIDR notation (RFC 4632 §3.1 for IPv4, RFC 4291 §2.3 for IPv6):
/// `10.0.0.0/8`, `2001:db8::/32`, or one address (`127.0.0.1`, `::1`: all its bits).
/// An entry of `trusted_proxies`.
struct IPRange: Sendable, Equatable, CustomStringConvertible {
    /// The first address of the range: its bits after `prefixLength` are 0.
    let network: IPAddress
    /// How many leading bits an address must share with `network`: 0...32 (IPv4), 0...128 (IPv6).
    let prefixLength: Int

    /// Reads `ADDRESS` or `ADDRESS/BITS`. An IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`,
    /// RFC 4291 §2.5.5.2) is the IPv4 range it maps (`10.0.0.0/8`: its length less 96), since a
    /// peer at such an address (a dual-stack socket's IPv4 client) is read as IPv4 (`IPAddress`).
    /// `entry`: its position in the list, from 1, for the sentence.
    /// - Throws: `ConfigError` naming `key`, the entry's position and its text: not an address,
    ///   a length that is not a number or is longer than the address as written (32 bits for
    ///   IPv4, 128 for IPv6), a length with a leading zero (`/08`: refused as inet_pton(3)
    ///   refuses `127.0.0.01`), or bits set after the prefix (`10.1.2.3/8`: which was meant,
    ///   `10.0.0.0/8` or `10.1.2.3`, cannot be told; `::ffff:10.0.0.0/80` reaches past the
    ///   IPv4-mapped addresses).
    init(_ text: String, entry: Int = 1, key: String = "trusted_proxies") throws(ConfigError) {
        let named = "key '\(key)': entry \(entry), '\(text)',"
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else {
            throw ConfigError("\(named) is not an IP address or a CIDR range (such as 127.0.0.1, 10.0.0.0/8 or fd00::/8)")
        }
        // Written as IPv6 but read as IPv4: `IPAddress` makes an IPv4-mapped address IPv4.
        let mapped = address.isIPv4 && parts[0].contains(":")
        let bits = mapped ? 128 : address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let given = Int(parts[1]), (0...bits).contains(given) else {
                throw ConfigError("\(named) has a prefix length that is not 0 to \(bits), the bits of an "
                    + (bits == 32 ? "IPv4" : "IPv6") + " address")
            }
            guard parts[1].count == 1 || parts[1].first != "0" else {
                throw ConfigError("\(named) has a prefix length with a leading zero: write it without "
                    + "(\(parts[0])/\(given)), as an address is written without one")
            }
            length = given
        }
        // As written: a mapped address in its 16 bytes (::ffff: and then the IPv4 address).
        let written = mapped ? [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + address.bytes : address.bytes
        let network = Self.masked(written, to: length)
        guard network == written else {
            let first = mapped ? Self.mappedText(network) : IPAddress(bytes: network)!.description
            throw ConfigError("\(named) has bits set after its /\(length) prefix: write the range's first address "
                + "(\(first)/\(length)) or the one address without a length")
        }
        self.network = address
        prefixLength = mapped ? length - 96 : length
    }

    /// 16 bytes as IPv6 text, an IPv4-mapped address in its IPv6 form (`::ffff:10.0.0.0`, not
    /// the IPv4 form `IPAddress` gives it).
    private static func mappedText(_ bytes: [UInt8]) -> String {
        let isMapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return isMapped ? "::ffff:" + IPAddress(bytes: Array(bytes[12...]))!.description : IPAddress(bytes: bytes)!.description
    }

    /// Whether `address` is in the range: of the same family, its first `prefixLength` bits
    /// those of `network`.
    func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    /// `10.0.0.0/8`; one address as itself.
    var description: String {
        prefixLength == network.bytes.count * 8 ? network.description : "\(network)/\(prefixLength)"
    }

    /// `bytes` with every bit after the first `length` cleared.
    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}

/// Which peers may say who the client is (`trusted_proxies`), and so whose `X-Forwarded-For`
/// is read: as nginx's `set_real_ip_from` with `real_ip_header X-Forwarded-For` and
/// `real_ip_recursive on` (ngx_http_realip_module). None by default: the peer is the client.
struct TrustedProxies: Sendable, Equatable {
    let ranges: [IPRange]

    /// - Throws: `ConfigError` naming the first entry that is not an address or CIDR range
    ///   (`IPRange`), by its position and its text.
    init(_ entries: [String]) throws(ConfigError) {
        var ranges: [IPRange] = []
        for (index, entry) in entries.enumerated() { ranges.append(try IPRange(entry, entry: index + 1)) }
        self.ranges = ranges
    }

    func trusts(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client of a connection from `peer` whose request carried `forwardedFor`: the peer
    /// itself unless it is trusted; else `X-Forwarded-For`'s addresses walked from the right
    /// (each proxy appends the address it heard from), the first one not trusted. When every
    /// address is trusted, the leftmost; an entry that is not an address stops the walk at the
    /// last address read (a trusted proxy's, so a client cannot pose as another by sending junk).
    /// The client of a request from `peer` with `headers`: `client(peer:forwardedFor:)` of
    /// every `X-Forwarded-For` line, combined in order as one list (RFC 9110 §5.3), so that a
    /// proxy that appends a line of its own (HAProxy's `option forwardfor`) is read, not a
    /// first line the client wrote.
    func client(peer: IPAddress?, headers: HTTPHeaders) -> IPAddress? {
        let lines = headers.values("X-Forwarded-For")
        return client(peer: peer, forwardedFor: lines.isEmpty ? nil : lines.joined(separator: ","))
    }

    func client(peer: IPAddress?, forwardedFor: String?) -> IPAddress? {
        guard let peer, trusts(peer), let forwardedFor else { return peer }
        var client = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let address = IPAddress(entry.trimmingWhitespace()) else { break }
            client = address
            if !trusts(address) { break }
        }
        return client
    }
}
