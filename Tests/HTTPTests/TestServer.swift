import Dispatch
import Foundation
import HTTP
import Synchronization

/// Routes for socket tests:
/// - `/slow?ms=N`: answered after N ms from another queue;
/// - `/big`: an 8 MiB body where byte i is `i % 251`;
/// - `/echo`: the request body back;
/// - `/never`: never answered;
/// - `/abortable`: never answered, but an abort of its client is recorded in `aborted`
///   (`HTTPClientAbort`); `/abortable-late` registers only after `respond` returned (ignored);
/// - `/not-modified`: 304 with an ETag;
/// - `/file`: body `"file:"`, then `TestFile.shared`'s bytes from offset 100 (a file region);
/// - `/file-short`: a file region 1,000 bytes longer than the file holds;
/// - anything else: `hello <target>`.
struct TestResponder: HTTPResponder {
    /// Targets of `/abortable` requests whose client went away, in the order the aborts came.
    static let aborted = Mutex<[String]>([])

    static let big: [UInt8] = {
        // Built by doubling a 251-byte period (fast even in debug and sanitizer builds).
        var bytes = (0..<251).map { UInt8($0) }
        while bytes.count < 8 << 20 { bytes += bytes }
        return Array(bytes[0..<(8 << 20)])
    }()

    func respond(to request: HTTPRequest, completion: @escaping @Sendable (HTTPResponse) -> Void) {
        var headers = HTTPHeaders()
        headers.add("X-Test", "yes")
        switch request.path {
        case "/slow":
            let ms = Int(request.query?.split(separator: "=").last ?? "100") ?? 100
            let target = request.target
            let headers = headers
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(ms)) {
                completion(HTTPResponse(status: 200, headers: headers, body: Array("hello \(target)".utf8)))
            }
        case "/big":
            completion(HTTPResponse(status: 200, headers: headers, body: Self.big))
        case "/echo":
            completion(HTTPResponse(status: 200, headers: headers, body: request.body))
        case "/never":
            break
        case "/abortable":
            let target = request.target
            request.clientAbort.onAbort { Self.aborted.withLock { $0.append(target) } }
        case "/abortable-late":
            let target = request.target
            let abort = request.clientAbort
            DispatchQueue.global().async { abort.onAbort { Self.aborted.withLock { $0.append(target) } } }
        case "/file":
            let f = TestFile.shared
            completion(HTTPResponse(status: 200, headers: headers, body: Array("file:".utf8),
                                    file: HTTPFileRegion(fd: f.fd, offset: 100, count: f.bytes.count - 100, owner: f)))
        case "/file-short":
            let f = TestFile.shared
            completion(HTTPResponse(status: 200, headers: headers,
                                    file: HTTPFileRegion(fd: f.fd, offset: 0, count: f.bytes.count + 1000, owner: f)))
        case "/not-modified":
            headers.add("ETag", "\"abc\"")
            completion(HTTPResponse(status: 304, headers: headers, body: Array("ignored".utf8)))
        default:
            completion(HTTPResponse(status: 200, headers: headers, body: Array("hello \(request.target)".utf8)))
        }
    }
}

/// A 3 MiB temporary file (byte i is `(i * 7) % 256`), open for the life of the test process.
final class TestFile: Sendable {
    static let shared = TestFile()
    /// Built by doubling a 256-byte period, as `TestResponder.big` is: mapping 3 Mi indices took
    /// over 5 s under ThreadSanitizer, on the event loop of the first request that used it, and
    /// its client timed out.
    let bytes: [UInt8] = {
        var bytes = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        while bytes.count < 3 << 20 { bytes += bytes }
        return Array(bytes[0..<(3 << 20)])
    }()
    let fd: Int32

    private init() {
        let path = NSTemporaryDirectory() + "thumbd-http-file-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        fd = open(path, O_RDONLY)
        unlink(path)   // the descriptor keeps it
    }
}

/// Collects `onExchange` records.
final class ExchangeLog: Sendable {
    let records = Mutex<[HTTPExchangeRecord]>([])  // Locking: this Mutex guards the records.

    func append(_ r: HTTPExchangeRecord) { records.withLock { $0.append(r) } }

    /// Waits up to 2 s for at least `count` records.
    func wait(for count: Int) -> [HTTPExchangeRecord] {
        for _ in 0..<200 {
            let r = records.withLock { $0 }
            if r.count >= count { return r }
            usleep(10_000)
        }
        return records.withLock { $0 }
    }
}

/// A started server on an ephemeral port of 127.0.0.1.
struct RunningServer {
    let server: HTTPServer
    let port: UInt16
    let log: ExchangeLog

    init(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoopCount = 2
        let log = ExchangeLog()
        configuration.onExchange = { log.append($0) }
        configure(&configuration)
        HTTPProcess.ignoreBrokenPipes()   // the launcher's part (thumbd's ProcessSetup)
        server = HTTPServer(configuration: configuration, responder: TestResponder())
        port = try server.start()
        self.log = log
    }

    func client(timeout: Double = 5, receiveBufferBytes: Int32? = nil) throws -> TestClient {
        try TestClient(port: port, timeout: timeout, receiveBufferBytes: receiveBufferBytes)
    }

    /// Shuts down and waits (up to `wait` seconds) for completion; true when it completed.
    @discardableResult
    func stop(gracePeriod: Double = 0.1, wait: Double = 5) -> Bool {
        let done = DispatchSemaphore(value: 0)
        server.shutdown(gracePeriod: gracePeriod) { done.signal() }
        return done.wait(timeout: .now() + wait) == .success
    }

    /// Waits up to 2 s for the open connection count to reach `open`.
    func waitForOpenConnections(_ open: Int) -> Int {
        for _ in 0..<200 {
            if server.connectionCounts.open == open { return open }
            usleep(10_000)
        }
        return server.connectionCounts.open
    }
}

func get(_ target: String, _ extra: String = "") -> String {
    "GET \(target) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}
