import Foundation
import TestSupport

/// A response as the test client read it.
struct TestResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body's dimensions and format, read without libvips.
    var image: ImageHeader? { ImageHeader(body) }

    /// Whether the body carries EXIF.
    var carriesEXIF: Bool { ImageHeader.containsEXIF(body) }

    /// A short stand-in for the body in comparisons, so a failure does not print every byte.
    var bodyDigest: String {
        var hasher = Hasher()
        hasher.combine(body)
        return "\(body.count) bytes #\(hasher.finalize())"
    }

    /// The body parsed as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }
}

/// A deliberately plain HTTP/1.1 client over a blocking POSIX socket: it sends exactly the
/// bytes it is given (so tests control every percent-escape) and reads until the server closes.
enum TestClient {
    static func get(port: UInt16, _ target: String, method: String = "GET",
                    headers: [String: String] = [:]) throws -> TestResponse {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        let raw = try exchange(port: port, Array(request.utf8))
        return try parse(raw, method: method)
    }

    struct ClientError: Error, CustomStringConvertible { let description: String }

    /// Sends `bytes`, reads until EOF (30 s timeout).
    static func exchange(port: UInt16, _ bytes: [UInt8]) throws -> [UInt8] {
        let fd = try connect(port: port)
        defer { close(fd) }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }   // a signal (another test's child exiting)
            guard n > 0 else { throw ClientError(description: "send: \(errno)") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { break }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw ClientError(description: "recv: \(errno) after \(received.count) bytes") }
            received += buffer[0..<n]
        }
        return received
    }

    /// A socket connected to 127.0.0.1:`port` (30 s receive timeout); the caller closes it.
    static func connect(port: UInt16) throws -> Int32 {
        try LoopbackSocket.connect(port: port)
    }

    static func parse(_ raw: [UInt8], method: String = "GET") throws -> TestResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, raw.count - 3)).first(where: { raw[$0..<$0 + 4].elementsEqual(separator) }) else {
            throw ClientError(description: "no header end in \(raw.count) bytes")
        }
        let head = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw ClientError(description: "bad status line \(head[0])")
        }
        let headers: [(String, String)] = head.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return TestResponse(status: status, headers: headers, body: Array(raw[(end + 4)...]))
    }
}
