/// Why a request could not be parsed. Each case maps to the status the server answers with
/// before closing the connection, and to the `error` code of the JSON error body
/// (`{"error": "<code>", "message": "<text>"}`, see docs/API.md).
public enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 400: malformed syntax (RFC 9112 §3, §5, §6, §7); the text says what was wrong.
    case badRequest(String)
    /// 414: the request line is longer than `maxRequestLineBytes` (RFC 9110 §15.5.15).
    case uriTooLong
    /// 431: request line plus header section (or a trailer section) is longer than
    /// `maxHeaderBytes` (RFC 6585 §5).
    case headersTooLarge
    /// 413: the declared or de-chunked body is longer than `maxBodyBytes` (RFC 9110 §15.5.14).
    case payloadTooLarge
    /// 408: the head did not arrive within `headerTimeout`, or the body within `bodyTimeout`.
    /// Raised by the server, never by the parser (RFC 9110 §15.5.9).
    case requestTimeout
    /// 505: an HTTP major version other than 1 (RFC 9110 §15.6.6).
    case versionNotSupported
    /// 501: a transfer coding other than `chunked` (RFC 9112 §6.1).
    case notImplemented(String)

    /// The status code the server answers with.
    public var status: Int {
        switch self {
        case .badRequest: 400
        case .uriTooLong: 414
        case .headersTooLarge: 431
        case .payloadTooLarge: 413
        case .requestTimeout: 408
        case .versionNotSupported: 505
        case .notImplemented: 501
        }
    }

    /// The machine-readable `error` code of the JSON body.
    public var code: String {
        switch self {
        case .badRequest: "bad_request"
        case .uriTooLong: "uri_too_long"
        case .headersTooLarge: "headers_too_large"
        case .payloadTooLarge: "payload_too_large"
        case .requestTimeout: "request_timeout"
        case .versionNotSupported: "version_not_supported"
        case .notImplemented: "not_implemented"
        }
    }

    /// A human-readable sentence, safe to show to the client.
    public var message: String {
        switch self {
        case .badRequest(let why): why
        case .uriTooLong: "The request line is too long."
        case .headersTooLarge: "The request header section is too large."
        case .payloadTooLarge: "The request body is too large."
        case .requestTimeout: "The request did not arrive in time."
        case .versionNotSupported: "Only HTTP/1.0 and HTTP/1.1 are supported."
        case .notImplemented(let why): why
        }
    }

    public var description: String { "\(status) \(code): \(message)" }
}
