import HTTP

/// One route of the service (docs/API.md, "Endpoints"), declared once in `Route.all`: where it is,
/// the methods it answers (its `Allow`), who may call it, and its handler. `ThumbService.respond`
/// matches the thumbnail route first, by a `memcmp` of the target's bytes, and the others in
/// table order; every route is then answered the same way (`ThumbService.answer`): a 401 for an
/// admin route without the token, a 404 for a prefix whose rest names nothing, a 405 with
/// `Allow` for another method, else the handler.
struct Route: Sendable {
    /// The methods a route answers, listed in `Allow` in this order: GET, HEAD, POST, DELETE,
    /// OPTIONS. Every route also answers OPTIONS (`ThumbService.answer`: its `Allow`, and a CORS
    /// preflight's answer where `CORSPolicy` opens it), so a route declares only the others.
    struct Methods: OptionSet, Sendable {
        let rawValue: UInt8
        static let get = Methods(rawValue: 1)
        static let head = Methods(rawValue: 2)
        static let post = Methods(rawValue: 4)
        static let delete = Methods(rawValue: 8)
        /// RFC 9110 §9.3.7.
        static let options = Methods(rawValue: 16)
        static let read: Methods = [.get, .head]

        /// The method a request names; nil for any other (PUT, PATCH, …), which no route answers.
        /// Inlined, so that a hit reads its method without a retain of the string.
        @inline(__always) init?(method: borrowing String) {
            switch method {
            case "GET": self = .get
            case "HEAD": self = .head
            case "POST": self = .post
            case "DELETE": self = .delete
            case "OPTIONS": self = .options
            default: return nil
            }
        }

        init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The `Allow` field value (RFC 9110 §10.2.1), e.g. `GET, HEAD`.
        var allow: String {
            [(Methods.get, "GET"), (.head, "HEAD"), (.post, "POST"), (.delete, "DELETE"), (.options, "OPTIONS")]
                .filter { contains($0.0) }.map(\.1).joined(separator: ", ")
        }
    }

    /// Who may call a route when `admin_token` is set (`AdminAuthorization`).
    enum Access: Sendable {
        case open
        /// Every method needs the token.
        case admin
        /// Every method but GET and HEAD needs it: reading stays open, changing does not.
        case adminToChange
        /// `/assets`: open, or with `client_keys` a client key (or the admin token) for every
        /// method but OPTIONS (a CORS preflight carries no credentials); `Client.prefix` scopes it.
        case listing
        /// `/prefetch…`: as `.adminToChange`, or with `client_keys` a client key (or the admin
        /// token) for every method; jobs belong to their `Client`.
        case prefetch
    }

    enum Match: Sendable {
        /// The path is exactly this.
        case path(StaticString)
        /// The path starts with this; what follows is checked by `resource`.
        case prefix(StaticString)
    }

    /// Answers a request the route matched, with the method it names (one of `methods`) and who
    /// sent it (`ThumbService.client(for:changing:)` for `.listing` and `.prefetch` routes; an
    /// anonymous client for the others), under the settings the request read once
    /// (`ThumbService.configuration`: a reload does not change them under a request in flight).
    typealias Handler = @Sendable (ThumbService, HTTPRequest, Methods, Client, ServiceConfiguration,
                                   @escaping @Sendable (HTTPResponse) -> Void) -> Void

    let match: Match
    let methods: Methods
    let access: Access
    /// For a prefix: the 404 for a rest of the path that names nothing, whatever the method;
    /// nil when it does. Nil for every route that needs no such check.
    var resource: (@Sendable (Substring) -> APIError?)? = nil
    let handler: Handler

    /// Whether `path` (still percent-encoded) is this route's, compared as bytes.
    func matches(_ path: Substring) -> Bool {
        switch match {
        case .path(let exact): return Self.bytes(of: path, start: exact, exact: true)
        case .prefix(let prefix): return Self.bytes(of: path, start: prefix, exact: false)
        }
    }

    /// What follows a prefix route's prefix in `path` (all of it for an exact route).
    func rest(of path: Substring) -> Substring {
        guard case .prefix(let prefix) = match else { return path }
        return path.dropFirst(prefix.description.count)
    }

    /// Whether `text`'s bytes start with (or, `exact`, are) `start`'s.
    private static func bytes(of text: Substring, start: StaticString, exact: Bool) -> Bool {
        let wanted = UnsafeBufferPointer(start: start.utf8Start, count: start.utf8CodeUnitCount)
        let utf8 = text.utf8
        guard exact ? utf8.count == wanted.count : utf8.count >= wanted.count else { return false }
        return utf8.prefix(wanted.count).elementsEqual(wanted)
    }
}
