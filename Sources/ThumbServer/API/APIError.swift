import HTTP

/// An error that renders itself (docs/API.md, "Errors"): a status, a stable code and a message safe to
/// show. Anything else that goes wrong becomes a bare 500 `internal_error`.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    /// Machine-readable code, e.g. `not_found`.
    public var code: String
    /// A sentence for people; never contains server paths outside the library.
    public var message: String
    /// Extra headers (e.g. `Allow` on 405, `Retry-After` on 503).
    public var headers: [String: String] = [:]

    public init(status: Int, code: String, message: String, headers: [String: String] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public static func badRequest(_ message: String) -> APIError { APIError(status: 400, code: "bad_request", message: message) }
    public static func notFound(_ message: String) -> APIError { APIError(status: 404, code: "not_found", message: message) }
    /// 401 with `WWW-Authenticate: Bearer` (RFC 6750 §3): `message` says which token is missing.
    public static func unauthorized(_ message: String) -> APIError {
        APIError(status: 401, code: "unauthorized", message: message, headers: ["WWW-Authenticate": "Bearer realm=\"thumbd\""])
    }
    public static func methodNotAllowed(_ allow: String) -> APIError {
        APIError(status: 405, code: "method_not_allowed", message: "this resource allows \(allow)", headers: ["Allow": allow])
    }

    /// 503 while a fresh library index is still in its first scan: a listing or a range
    /// prefetch would silently miss photos not yet read.
    public static let indexBuilding = APIError(
        status: 503, code: "index_building",
        message: "the library is being indexed for the first time; retry shortly", headers: ["Retry-After": "1"])

    /// 503 when no file descriptor was free for the request (EMFILE or ENFILE at an open): the
    /// process is at its open-file limit for a moment (`DescriptorBudget` keeps connections and
    /// cached descriptors below it, so this is what slips past the reserve).
    public static let outOfDescriptors = APIError(
        status: 503, code: "out_of_descriptors",
        message: "the server has no file descriptor free for this request; retry shortly", headers: ["Retry-After": "1"])

    /// The JSON response: `HTTPErrorBody` (`{"error": code, "message": message}`) with
    /// `Cache-Control: no-store` and no ETag, plus `headers`.
    public var response: HTTPResponse {
        var response = HTTPErrorResponse.make(status: status, code: code, message: message)
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { response.headers.add(name, value) }
        return response
    }
}

/// JSON string literals for text written by hand: quoted names in messages, the `/stats`
/// rendering (`StatsSchema+Rendering.swift`) and the body of a forwarded prefetch. Response
/// bodies are `Codable` types written by `JSONBody.encode`.
enum JSON {
    /// `text` as a JSON string literal (RFC 8259 §7): `"` and `\` escaped, control characters
    /// as `\n`, `\r`, `\t` or `\u00XX`; everything else as it is.
    static func quote(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
