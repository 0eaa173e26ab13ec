import HTTP

/// Bearer-token protection of the admin routes (RFC 6750 §2.1): when `admin_token` is set, a
/// route declared `.admin` (`/stats`, `/metrics`) needs `Authorization: Bearer <token>` for
/// every method, one declared `.adminToChange` (`/prefetch…`) for every method but GET and HEAD
/// (`Route.all`); thumbnails, `/assets`, `/healthz` and reading a job stay open.
enum AdminAuthorization {
    /// A 401 for a request to a route of `access` that needs the token and lacks it; nil when it
    /// may go on. `method`: the request's, nil when no route answers it (it needs the token too).
    static func refusal(for request: HTTPRequest, method: Route.Methods?, access: Route.Access,
                        token: String) -> APIError? {
        guard !token.isEmpty, needsToken(method, access) else { return nil }
        let presented = request.headers["Authorization"].flatMap { value -> Substring? in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingWhitespace() : nil
        }
        if let presented, constantTimeEqual(Array(presented.utf8), Array(token.utf8)) { return nil }
        return APIError(status: 401, code: "unauthorized", message: "this resource needs Authorization: Bearer <admin_token>",
                        headers: ["WWW-Authenticate": "Bearer realm=\"thumbd\""])
    }

    private static func needsToken(_ method: Route.Methods?, _ access: Route.Access) -> Bool {
        switch access {
        case .open: false
        case .admin: true
        case .adminToChange: method.map { !Route.Methods.read.contains($0) } ?? true
        }
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
