import Foundation
import TestSupport

/// One keep-alive connection to a server under test: sends a request, reads its response
/// (framed by `Content-Length`; no body for HEAD, 204 and 304), and keeps the connection for
/// the next one, as a browser or an app's URL session does.
final class KeepAliveClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port` (receive timeout `timeout` seconds).
    init(port: UInt16, timeout: Double = 30) throws {
        fd = try LoopbackSocket.connect(port: port, timeout: timeout)
    }

    deinit { close(fd) }

    /// `method target` with `headers`, and its response.
    func request(_ target: String, method: String = "GET", headers: [String: String] = [:]) throws -> TestResponse {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        let bytes = Array((text + "\r\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw TestClient.ClientError(description: "send: \(errno)") }
            sent += n
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while true {
            end = buffer.count < 4 ? nil : (0...(buffer.count - 4)).first { buffer[$0..<$0 + 4].elementsEqual(separator) }
            if end != nil { break }
            try fill()
        }
        let head = try TestClient.parse(Array(buffer[..<(end! + 4)]), method: method)
        let length = method == "HEAD" || head.status == 204 || head.status == 304
            ? 0 : Int(head.header("Content-Length") ?? "0") ?? 0
        while buffer.count < end! + 4 + length { try fill() }
        let body = Array(buffer[(end! + 4)..<(end! + 4 + length)])
        buffer.removeFirst(end! + 4 + length)
        return TestResponse(status: head.status, headers: head.headers, body: body)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw TestClient.ClientError(description: n == 0 ? "closed by the server" : "recv: \(errno)") }
            buffer += chunk[0..<n]
            return
        }
    }
}
