#if canImport(Glibc)
import Glibc
#endif

/// Free TCP ports on 127.0.0.1 for servers a test starts at fixed ports (nginx, thumbd nodes).
public enum LoopbackPorts {
    /// `count` distinct loopback ports the kernel has just given out as free (each bound to port
    /// 0, all held at once, then closed): not in use now, unlike a fixed range, which may meet
    /// the ephemeral ports of other tests' connections. Nil when a socket cannot be had.
    public static func free(_ count: Int) -> [UInt16]? {
        var sockets: [Int32] = [], ports: [UInt16] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            sockets.append(fd)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
                }
            }
            guard bound else { return nil }
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        return ports
    }
}
