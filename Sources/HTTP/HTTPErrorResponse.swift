/// The server's own error responses: JSON `{"error": "<code>", "message": "<text>"}`
/// (`HTTPErrorBody`) with `Cache-Control: no-store` (docs/API.md, "Errors"). The application's
/// errors use it too.
public enum HTTPErrorResponse {
    /// A response with `status`, the machine-readable `code` and a human-readable `message`.
    public static func make(status: Int, code: String, message: String) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: JSONBody.encode(HTTPErrorBody(error: code, message: message)))
    }
}
