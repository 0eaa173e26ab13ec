#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as bytes in network order: 4 for IPv4, 16 for IPv6. An IPv4-mapped
/// IPv6 address (`::ffff:192.0.2.1`, RFC 4291 §2.5.5.2, what a dual-stack socket reports for
/// an IPv4 peer) is kept as the IPv4 address it maps, so that it matches IPv4 ranges and is
/// written as nginx writes it.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let bytes: [UInt8]

    /// From 4 or 16 bytes, an IPv4-mapped IPv6 address made IPv4; nil for another count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        if bytes.count == 16 && bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            self.bytes = Array(bytes[12...])
        } else {
            self.bytes = bytes
        }
    }

    /// From its text as inet_pton(3) reads it: dotted IPv4 (`192.0.2.1`) or IPv6 (`2001:db8::1`);
    /// nil for anything else (a name, a port, brackets, a zone, spaces).
    public init?(_ text: some StringProtocol) {
        var four = in_addr(), sixteen = in6_addr()
        let text = String(text)
        if inet_pton(AF_INET, text, &four) == 1 {
            self.init(bytes: withUnsafeBytes(of: four) { Array($0) })
        } else if inet_pton(AF_INET6, text, &sixteen) == 1 {
            self.init(bytes: withUnsafeBytes(of: sixteen) { Array($0) })
        } else {
            return nil
        }
    }

    /// The peer of a `sockaddr_in` or `sockaddr_in6`; nil for another family (a Unix socket).
    init?(socketAddress storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self).sin_addr }
            self.init(bytes: withUnsafeBytes(of: address) { Array($0) })
        case AF_INET6:
            let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self).sin6_addr }
            self.init(bytes: withUnsafeBytes(of: address) { Array($0) })
        default:
            return nil
        }
    }

    /// Whether it is IPv4 (4 bytes).
    public var isIPv4: Bool { bytes.count == 4 }

    /// As inet_ntop(3) writes it: `192.0.2.1`, `2001:db8::1` (RFC 5952's short form).
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return "-" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
