import HTTP

/// Bearer-token protection of the admin routes (RFC 6750 §2.1): when `admin_token` is set,
/// changing prefetch jobs (`POST`/`DELETE /prefetch…`), `/stats` and `/metrics` need
/// `Authorization: Bearer <token>`; thumbnails, `/assets`, `/healthz` and reading a job stay open.
enum AdminAuthorization {
    /// A 401 for a request that needs the token and lacks it; nil when it may go on.
    static func refusal(for request: HTTPRequest, token: String) -> APIError? {
        guard !token.isEmpty, isAdmin(request) else { return nil }
        let presented = request.headers["Authorization"].flatMap { value -> Substring? in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingWhitespace() : nil
        }
        if let presented, constantTimeEqual(Array(presented.utf8), Array(token.utf8)) { return nil }
        return APIError(status: 401, code: "unauthorized", message: "this resource needs Authorization: Bearer <admin_token>",
                        headers: ["WWW-Authenticate": "Bearer realm=\"thumbd\""])
    }

    static func isAdmin(_ request: HTTPRequest) -> Bool {
        let path = request.path
        if path == "/stats" || path == "/metrics" { return true }
        if path == "/prefetch" || path.hasPrefix("/prefetch/") { return request.method != "GET" && request.method != "HEAD" }
        return false
    }

    /// Compares without an early exit, so response time does not leak how much of a guess matched.
    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's OWS).
    func trimmingWhitespace() -> SubSequence {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" { s = s.dropLast() }
        return s
    }
}
