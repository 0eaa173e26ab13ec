import HTTP
import Library

/// Who sent a request to the app's routes (`/assets`, `/prefetch…`), as `ThumbService.client(for:)`
/// works it out: the admin, a client key, or an anonymous client that may name itself. Decides
/// what the listing shows and a prefetch may reach (`scope`, by the one rule `LibraryScope`
/// gives: everything `/assets` gives, items and whatever else an item carries, goes by it),
/// whose prefetch jobs a request sees and stops (`owner`) and which limits apply (`PrefetchLimits`).
public struct Client: Sendable, Equatable {
    /// The header an anonymous client names itself by when no `client_keys` are set, so that
    /// two phones' `DELETE /prefetch` stop only their own jobs: 1 to 64 letters, digits, `-`,
    /// `.` and `_` (a random id per app install or page load).
    public static let idHeader = "Thumbd-Client-Id"

    /// Whose prefetch jobs these are: `key:{id}` for a client key, `id:{header}` for a client
    /// that names itself (the admin too), `admin` for the admin that does not, `anonymous` for
    /// anyone else.
    public let owner: String
    /// The part of the library the client sees: its key's `prefix` folder, or all of it.
    public let scope: LibraryScope
    /// The admin token: sees every job, may stop them all, and no per-client limit applies.
    public let isAdmin: Bool

    /// A client that names no id, where no client keys are set (and who any other route's request is).
    static let anonymous = Client(owner: "anonymous", scope: .whole, isAdmin: false)
}

extension ThumbService {
    /// Who `request` is (`Client`), or the 401 that refuses it:
    /// - `Authorization: Bearer <admin_token>` (when one is set): the admin;
    /// - with `client_keys` set: a bearer key whose SHA-256 is one of theirs (compared by
    ///   `CRYPTO_memcmp` against every key, so time does not tell which matched), not past its
    ///   `expires`; anything else is 401 `unauthorized` (`key_expired` for an expired key);
    /// - without: anyone, as the client the `Thumbd-Client-Id` header names (400 for an id that
    ///   is not 1 to 64 letters, digits, `-`, `.`, `_`); `changing` (a POST or DELETE) needs
    ///   the admin token when one is set, as before client keys.
    /// The admin's jobs are `admin`'s, or those of the id it names (two apps holding the token
    /// still stop only their own jobs); it sees and may stop every job.
    /// `configuration`: the settings the request read (`answer`).
    func client(for request: HTTPRequest, changing: Bool, _ configuration: ServiceConfiguration) -> Result<Client, APIError> {
        let bearer = AdminAuthorization.bearer(in: request)
        let named = request.headers[Client.idHeader]
        if let named, !ClientKey.isIdentifier(named) {
            return .failure(.badRequest("\(Client.idHeader) must be 1 to 64 letters, digits, '-', '.' and '_'"))
        }
        if AdminAuthorization.presentsToken(request, configuration) {
            // Two apps that both hold the admin token still own their jobs apart by the id they name.
            return .success(Client(owner: named.map { "id:" + $0 } ?? "admin", scope: .whole, isAdmin: true))
        }
        if !configuration.clientKeys.isEmpty {
            guard let bearer else {
                return .failure(APIError.unauthorized("this resource needs Authorization: Bearer <client key>"))
            }
            let digest = Crypto.sha256(Array(bearer.utf8))
            var found: ClientKey?
            for key in configuration.clientKeys where Crypto.equal(digest, key.sha256) { found = key }
            guard let key = found else { return .failure(APIError.unauthorized("the bearer key is not one of this server's client keys")) }
            if let expires = key.expires, expires <= Self.unixTime() {
                return .failure(APIError(status: 401, code: "key_expired", message: "this client key has expired; ask the app for a new one",
                                         headers: ["WWW-Authenticate": "Bearer realm=\"thumbd\", error=\"invalid_token\""]))
            }
            return .success(Client(owner: "key:" + key.id, scope: LibraryScope(folder: key.prefix), isAdmin: false))
        }
        if changing && !configuration.adminToken.isEmpty {
            return .failure(APIError.unauthorized("this resource needs Authorization: Bearer <admin_token>"))
        }
        return .success(named.map { Client(owner: "id:" + $0, scope: .whole, isAdmin: false) } ?? .anonymous)
    }
}
