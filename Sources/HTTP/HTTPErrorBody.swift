/// The body of every error response, the server's own (`HTTPErrorResponse`) and the
/// application's: `{"error": "<code>", "message": "<text>"}` (docs/API.md, "Errors").
public struct HTTPErrorBody: Codable, Sendable, Equatable {
    /// `error`: the machine-readable code, e.g. `not_found`, `request_timeout`.
    public var error: String
    /// `message`: a sentence for people.
    public var message: String

    public init(error: String, message: String) {
        self.error = error
        self.message = message
    }
}
