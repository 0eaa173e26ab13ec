/// The server's own error responses: JSON `{"error": "<code>", "message": "<text>"}` with
/// `Cache-Control: no-store` (docs/API.md, "Errors"). The application's errors use it too.
public enum HTTPErrorResponse {
    /// A response with `status`, the machine-readable `code` and a human-readable `message`.
    public static func make(status: Int, code: String, message: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Cache-Control", "no-store")
        let json = "{\"error\": \"\(jsonEscaped(code))\", \"message\": \"\(jsonEscaped(message))\"}"
        return HTTPResponse(status: status, headers: headers, body: Array(json.utf8))
    }

    /// `s` escaped for use inside a JSON string (RFC 8259 §7).
    public static func jsonEscaped(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
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
        return out
    }
}
