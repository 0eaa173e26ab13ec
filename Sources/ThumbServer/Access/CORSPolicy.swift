import HTTP

/// Cross-origin access to the public routes (`cors_origins`), by the CORS protocol of the Fetch
/// standard (https://fetch.spec.whatwg.org/#http-cors-protocol): a web app on another origin
/// may `fetch()` the listing and draw thumbnails into a canvas.
///
/// - Off (no origins, the default): no CORS header is ever sent.
/// - `*`: every response of a public route carries `Access-Control-Allow-Origin: *`, whatever
///   the request's `Origin` (the same answer for all, so no `Vary`; no credentials either way).
/// - A list of exact origins (`https://photos.example.com`): a request whose `Origin` is one of
///   them gets it echoed in `Access-Control-Allow-Origin`; every response of a public route
///   carries `Vary: Origin`, since whether it has that header depends on the request's `Origin`
///   (Fetch standard, "CORS protocol and HTTP caches").
///
/// Allowed responses also carry `Access-Control-Expose-Headers` (what a script may read beyond
/// the safelisted ones); a preflight (`OPTIONS` with `Access-Control-Request-Method`) is
/// answered with the methods and request headers the public routes take and how long a browser
/// may keep that answer. Only routes that never need `admin_token` are opened (`Route.Access.open`:
/// thumbnails, `/assets`, `/healthz`, `/`): `/stats`, `/metrics` and `/prefetch…` never carry a
/// CORS header, so a page on another origin cannot read them, nor send them the token.
struct CORSPolicy: Sendable, Equatable {
    enum Origins: Sendable, Equatable {
        case none
        case any
        case listed(Set<String>)
    }

    let origins: Origins

    /// The methods a preflight allows: the public routes' (`Access-Control-Allow-Methods`).
    static let allowedMethods = "GET, HEAD"
    /// Request headers a preflight allows beyond the safelisted ones: `If-None-Match` for
    /// revalidation; `Accept`, whose safelisted values are limited; `Authorization`, for a
    /// client key on `/assets` (`client_keys`: a web app on another origin sends its bearer key;
    /// no cookies, so no credentials mode) (`Access-Control-Allow-Headers`).
    static let allowedHeaders = "Accept, If-None-Match, Authorization"
    /// Response headers a script may read beyond the safelisted ones (`Cache-Control`,
    /// `Content-Length`, `Content-Type`, …): `Access-Control-Expose-Headers`.
    static let exposedHeaders = "ETag, X-Cache, Server-Timing, Retry-After"
    /// How long a browser may keep a preflight's answer, seconds (`Access-Control-Max-Age`):
    /// 7200, the most Chromium keeps (Firefox keeps up to 86,400).
    static let maxAgeSeconds = 7200

    /// From `cors_origins` as validated by `ConfigLoader` (`isOrigin`): empty is off, `["*"]`
    /// any origin, else the exact origins.
    init(origins: [String]) {
        if origins.isEmpty {
            self.origins = .none
        } else if origins.contains("*") {
            self.origins = .any
        } else {
            self.origins = .listed(Set(origins))
        }
    }

    var isEnabled: Bool { origins != .none }

    /// The headers to add to a public route's response to a request from `origin` (its
    /// `Origin` field, nil without one); `preflight`: the request is a CORS preflight.
    func headers(origin: String?, preflight: Bool) -> [(String, String)] {
        var headers: [(String, String)] = []
        let allowed: String?
        switch origins {
        case .none: return []
        case .any: allowed = "*"
        case .listed(let list):
            headers.append(("Vary", "Origin"))
            allowed = origin.flatMap { list.contains($0) ? $0 : nil }
        }
        guard let allowed else { return headers }
        headers.append(("Access-Control-Allow-Origin", allowed))
        if preflight {
            headers.append(("Access-Control-Allow-Methods", Self.allowedMethods))
            headers.append(("Access-Control-Allow-Headers", Self.allowedHeaders))
            headers.append(("Access-Control-Max-Age", String(Self.maxAgeSeconds)))
        } else {
            headers.append(("Access-Control-Expose-Headers", Self.exposedHeaders))
        }
        return headers
    }

    /// Whether `text` is an origin as a browser serializes it in `Origin` (RFC 6454 §6.2, the
    /// HTML standard's "serialization of an origin"), so that an exact comparison can match:
    /// a lowercase scheme, `://`, a lowercase host (a name, an IPv4 address or a bracketed IPv6
    /// address), an optional port that is not the scheme's default, and nothing after. `null`
    /// (the opaque origin of sandboxed frames and `file:` pages) is not one: allowing it would
    /// allow them all.
    static func isOrigin(_ text: String) -> Bool {
        guard let separator = text.range(of: "://") else { return false }
        let scheme = text[..<separator.lowerBound], rest = text[separator.upperBound...]
        guard let first = scheme.first, ("a"..."z").contains(first),
              scheme.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".contains($0) })
        else { return false }
        var host = rest[...], port: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            host = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return false }
                port = after.dropFirst()
            }
            guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit && !$0.isUppercase || $0 == ":" || $0 == "." }),
                  host.count > 2 else { return false }
        } else {
            if let colon = rest.lastIndex(of: ":") {
                host = rest[..<colon]
                port = rest[rest.index(after: colon)...]
            }
            guard !host.isEmpty, !host.hasPrefix("."), !host.hasSuffix("."),
                  host.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." })
            else { return false }
        }
        if let port {
            guard let number = Int(port), (1...65535).contains(number), String(number) == port,
                  !(scheme == "http" && number == 80), !(scheme == "https" && number == 443) else { return false }
        }
        return true
    }
}
