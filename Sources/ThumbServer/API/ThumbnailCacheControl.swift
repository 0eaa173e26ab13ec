/// The `Cache-Control` of a thumbnail's 200 and 304 (docs/API.md, "Thumbnails"): the one place
/// it is decided.
///
/// - A URL whose `?v=` is the source's current version: `cache_control` (a year, `immutable`).
/// - Any other URL: `cache_control_unversioned` (`no-cache`: revalidate every time).
/// - A signed URL (`signing_keys`): the same policy, but fresh for no longer than until its
///   `exp` (`freshForAtMost`): a CDN or browser keyed on the URL must not serve it after the
///   server would refuse it (issue 31).
extension ServiceConfiguration {
    /// The `Cache-Control` of a thumbnail at a URL that is `versioned` (its `v` is current) and,
    /// when signing is on, signed until `signedUntil` (its verified `exp`, seconds since 1970;
    /// nil: not signed), sent at `now` (seconds since 1970). A response sent after its URL's
    /// `exp` (a render that outlived it) is fresh for 0 seconds.
    func thumbnailCacheControl(versioned: Bool, signedUntil: Int?, now: Int) -> String {
        let policy = versioned ? cacheControl : unversionedCacheControl
        guard let signedUntil else { return policy }
        return Self.cacheControl(policy, freshForAtMost: max(0, signedUntil - now))
    }

    /// `policy` (a `Cache-Control` value, comma-separated directives) with no cache allowed to
    /// use the response more than `seconds` from now without asking the server (RFC 9111 §4.2):
    /// - `max-age` and `s-maxage` become at most `seconds` (a value too large or not a number
    ///   becomes `seconds`, a negative one 0);
    /// - `stale-while-revalidate` and `stale-if-error` (RFC 5861), which let a cache serve a
    ///   response after it is stale, are dropped;
    /// - when the policy has no `max-age` and neither `no-cache` nor `no-store`, `max-age=seconds`
    ///   is added, so no heuristic freshness (RFC 9111 §4.2.2) outlives it either.
    /// Every other directive is kept as written, `immutable` too (RFC 8246: the response does
    /// not change while it is fresh, which stays true of a shorter freshness). Directive names
    /// are compared case-insensitively (RFC 9111 §5.2).
    static func cacheControl(_ policy: String, freshForAtMost seconds: Int) -> String {
        var directives: [Substring] = []
        var hasMaxAge = false, revalidates = false
        for directive in policy.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = directive.trimmingWhitespace()
            let equals = trimmed.firstIndex(of: "=")
            let name = (equals.map { trimmed[..<$0] } ?? trimmed).trimmingWhitespace().lowercased()
            switch name {
            case "max-age", "s-maxage":
                hasMaxAge = hasMaxAge || name == "max-age"
                let given = equals.flatMap { Int(trimmed[trimmed.index(after: $0)...].trimmingWhitespace().unquoted) }
                let leading = directive.prefix { $0 == " " || $0 == "\t" }
                directives.append(leading + name + "=" + String(min(max(given ?? seconds, 0), seconds)))
            case "stale-while-revalidate", "stale-if-error":
                continue
            case "no-cache", "no-store":
                revalidates = revalidates || equals == nil   // `no-cache="field"` is about fields only
                directives.append(directive)
            default:
                directives.append(directive)
            }
        }
        let value = directives.joined(separator: ",")
        guard !hasMaxAge && !revalidates else { return value }
        return (value.trimmingWhitespace().isEmpty ? "" : value + ", ") + "max-age=" + String(seconds)
    }
}

private extension Substring {
    /// The text without one pair of surrounding double quotes (`"60"` → `60`), for a directive
    /// value sent as a quoted-string (RFC 9111 §5.2: recipients accept both forms).
    var unquoted: Substring {
        count >= 2 && first == "\"" && last == "\"" ? dropFirst().dropLast() : self
    }
}
