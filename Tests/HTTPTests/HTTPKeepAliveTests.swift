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
    ] as [(Int, [String], Bool)])
    func connectionHeaderDecides(minor: Int, connection: [String], keeps: Bool) {
        #expect(HTTPConnection.wantsKeepAlive(request(minor, connection)) == keeps, "HTTP/1.\(minor) Connection: \(connection)")
        // The same through the parser, whose headers stay bytes until read.
        let text = "GET / HTTP/1.\(minor)\r\nHost: h\r\n" + connection.map { "Connection: \($0)\r\n" }.joined() + "\r\n"
        let parsed = try? parseAll(text).first
        #expect(parsed.map(HTTPConnection.wantsKeepAlive) == keeps, "parsed HTTP/1.\(minor) Connection: \(connection)")
    }
}
