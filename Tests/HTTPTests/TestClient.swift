#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

/// A response as the test client read it.
struct TestResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
    var text: String { String(decoding: body, as: UTF8.self) }
}

struct TestClientError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking POSIX-socket HTTP client for tests, with a receive timeout (seconds).
final class TestClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, timeout: Double = 5, receiveBufferBytes: Int32? = nil) throws {
        do {
            fd = try LoopbackSocket.connect(port: port, timeout: timeout, receiveBufferBytes: receiveBufferBytes)
        } catch {
            throw TestClientError(description: error.description)
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }   // a signal, not a failure
            guard n > 0 else { throw TestClientError(description: "send: errno \(errno)") }
            sent += n
        }
    }

    /// Reads more bytes into the buffer; false on EOF. Throws on timeout or error.
    @discardableResult
    private func fill(max: Int = 65536) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: max)
        var n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        while n < 0 && errno == EINTR { n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) } }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n == 0 { return false }
        throw TestClientError(description: "recv: errno \(errno) (\(errno == EAGAIN ? "timeout" : "error"))")
    }

    /// Reads one response; `bodyless` for a HEAD request. Throws on EOF before a full response.
    func readResponse(bodyless: Bool = false) throws -> TestResponse {
        var headEnd: Int?
        while true {
            if let r = findHeadEnd() { headEnd = r; break }
            guard try fill() else { throw TestClientError(description: "EOF before response head") }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd!)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestClientError(description: "bad status line \(statusLine)")
        }
        let headers = lines.map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = TestResponse(status: status, headers: headers, body: [])
        let length = bodyless ? 0 : Int(response.header("Content-Length") ?? "0")!
        while buffer.count < length {
            guard try fill() else { throw TestClientError(description: "EOF in body (\(buffer.count) of \(length))") }
        }
        response.body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Reads exactly `count` body bytes in reads of at most `chunk` bytes, pausing between them.
    func readBytes(_ count: Int, chunk: Int, pauseMicroseconds: UInt32 = 0) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill(max: chunk) else { throw TestClientError(description: "EOF after \(buffer.count)") }
            if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
        }
        let out = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return out
    }

    /// True when the server closed the connection (EOF with nothing more buffered).
    func isClosedByServer() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill()
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}
