import Testing
@testable import HTTP

/// Persistence (RFC 9112 §9.3): HTTP/1.1 keeps the connection unless `Connection` lists `close`;
/// HTTP/1.0 closes it unless it lists `keep-alive`. Tokens compare case-insensitively.
@Suite("Keep-alive")
struct HTTPKeepAliveTests {
    func request(_ minor: Int, _ connection: [String]) -> HTTPRequest {
        HTTPRequest(method: "GET", target: "/", version: HTTPVersion(major: 1, minor: minor),
                    headers: HTTPHeaders(connection.map { ("Connection", $0) }))
    }

    @Test(arguments: [
        (1, [], true), (1, ["close"], false), (1, ["Close"], false), (1, ["keep-alive, close"], false),
        (1, [" close "], false), (1, ["upgrade", "close"], false), (1, ["closed"], true), (1, [""], true),
        (1, ["keep-alive"], true),
        (0, [], false), (0, ["keep-alive"], true), (0, ["Keep-Alive"], true), (0, ["foo,\tkeep-alive"], true),
        (0, ["keep-alive2"], false), (0, ["close"], false),
        // close wins over keep-alive in HTTP/1.0 as well (found by a fresh-eyes session).
        (0, ["keep-alive, close"], false), (0, ["keep-alive", "close"], false),
    ] as [(Int, [String], Bool)])
    func connectionHeaderDecides(minor: Int, connection: [String], keeps: Bool) {
        #expect(HTTPConnection.wantsKeepAlive(request(minor, connection)) == keeps, "HTTP/1.\(minor) Connection: \(connection)")
        // The same through the parser, whose headers stay bytes until read.
        let text = "GET / HTTP/1.\(minor)\r\nHost: h\r\n" + connection.map { "Connection: \($0)\r\n" }.joined() + "\r\n"
        let parsed = try? parseAll(text).first
        #expect(parsed.map(HTTPConnection.wantsKeepAlive) == keeps, "parsed HTTP/1.\(minor) Connection: \(connection)")
    }

    /// An HTTP/1.0 request with `Transfer-Encoding` closes the connection after its response,
    /// whatever its `Connection` says (RFC 9112 §6.1; found by a fresh-eyes session).
    @Test func anHTTP10RequestWithTransferEncodingCloses() throws {
        let text = "GET / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        let parsed = try #require(try parseAll(text).first)
        #expect(!HTTPConnection.wantsKeepAlive(parsed))
        let plain = try #require(try parseAll("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").first)
        #expect(HTTPConnection.wantsKeepAlive(plain))
    }
}
