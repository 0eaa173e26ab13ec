/// A peer's answer to one `PeerClient.send`: the status code and header fields of the final
/// (non-1xx) response and its body, framed as RFC 9112 §6.3 says (by `Content-Length`, or to the
/// end of the connection when the response has none).
public struct PeerResponse: Sendable {
    /// The status code (RFC 9112 §4): 200...599 (RFC 9110 §15); interim 1xx responses are skipped.
    public var status: Int
    /// The reason phrase after the code (RFC 9112 §4), possibly empty; informative only.
    public var reason: String
    /// The header fields in the order received, names as the peer spelled them, values with
    /// surrounding whitespace removed (RFC 9112 §5.1).
    public var headers: [(name: String, value: String)]
    /// The body bytes; at most `PeerClient.maximumBodyBytes` (4 MiB).
    public var body: [UInt8]

    public init(status: Int, reason: String = "", headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The value of the first field named `name`, compared case-insensitively (field names are
    /// case-insensitive, RFC 9110 §5.1); nil when there is none.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
