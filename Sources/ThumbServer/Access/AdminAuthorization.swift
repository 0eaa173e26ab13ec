import HTTP

/// Bearer-token protection of the admin routes (RFC 6750 §2.1): when `admin_token` is set, a
/// route declared `.admin` (`/stats`, `/metrics`) needs `Authorization: Bearer <token>` for
/// every method, one declared `.adminToChange` (`/prefetch…`) for every method but GET and HEAD
/// (`Route.all`); thumbnails, `/assets`, `/healthz` and reading a job stay open. The app's routes
/// (`.listing`, `.prefetch`) are judged by `ThumbService.client(for:changing:)`, which also knows
/// client keys.
enum AdminAuthorization {
    /// A 401 for a request to a route of `access` that needs the token and lacks it; nil when it
    /// may go on. `method`: the request's, nil when no route answers it (it needs the token too).
    static func refusal(for request: HTTPRequest, method: Route.Methods?, access: Route.Access,
                        configuration: ServiceConfiguration) -> APIError? {
        guard !configuration.adminToken.isEmpty, needsToken(method, access) else { return nil }
        if presentsToken(request, configuration) { return nil }
        return .unauthorized("this resource needs Authorization: Bearer <admin_token>")
    }

    /// Whether `request` carries the admin token (`Authorization: Bearer <admin_token>`, when one
    /// is set): the one admin check, for the admin routes here and the app's routes
    /// (`ThumbService.client(for:changing:)`). SHA-256 of both, compared by CRYPTO_memcmp: the
    /// time depends on neither the token's length nor how much of a guess matched.
    static func presentsToken(_ request: HTTPRequest, _ configuration: ServiceConfiguration) -> Bool {
        guard !configuration.adminToken.isEmpty, let presented = bearer(in: request) else { return false }
        return Crypto.equal(Crypto.sha256(Array(presented.utf8)), configuration.adminTokenDigest)
    }

    private static func needsToken(_ method: Route.Methods?, _ access: Route.Access) -> Bool {
        switch access {
        case .open: false
        case .admin: true
        case .adminToChange: method.map { !Route.Methods.read.contains($0) } ?? true
        case .listing, .prefetch: false   // `ThumbService.client(for:changing:)`
        }
    }

    /// The token of `Authorization: Bearer <token>` (RFC 6750 §2.1; the scheme in any case), or nil.
    static func bearer(in request: HTTPRequest) -> Substring? {
        request.headers["Authorization"].flatMap { value -> Substring? in
            let parts = value.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingWhitespace() : nil
        }
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
