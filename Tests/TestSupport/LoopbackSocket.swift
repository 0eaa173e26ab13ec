#if canImport(Glibc)
import Glibc
#endif

/// TCP sockets to a server under test on 127.0.0.1, for the test clients of every test target.
public enum LoopbackSocket {
    /// Why a socket could not be had.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A socket connected to 127.0.0.1:`port`, with receive and send timeouts of `timeout`
    /// seconds and, when given, a receive buffer of `receiveBufferBytes` bytes; the caller
    /// closes it.
    /// - Throws: `Failure` naming the call that failed and its errno.
    public static func connect(port: UInt16, timeout: Double = 30, receiveBufferBytes: Int32? = nil) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBufferBytes {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect: errno \(code)")
        }
        return fd
    }
}
