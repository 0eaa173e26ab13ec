import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error answer of thumbd: its status and the JSON body every error carries
/// (docs/API.md, "Errors": `{"error": "<code>", "message": "<text>"}`).
public struct ThumbdServerError: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status, 400...599.
    public var status: Int
    /// The stable code of docs/API.md's errors table (`not_found`, `key_expired`, `rate_limited`,
    /// `overloaded`...); `""` when the body was not thumbd's JSON (a proxy's page).
    public var code: String
    /// The server's sentence, safe to show; `""` when the body had none.
    public var message: String
    /// When to try again, from `Retry-After` (RFC 9110 §10.2.3, whole seconds): thumbd sends it
    /// with every 429 (`too_many_jobs`, `too_many_items`: 1 s; `rate_limited`: until the items
    /// fit) and 503 (`render_timeout`: 5 s; the others 1 s). Nil without the header.
    public var retryAfter: Duration?

    public init(status: Int, code: String, message: String, retryAfter: Duration? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String {
        "\(status) \(code.isEmpty ? "(no code)" : code): \(message)"
            + (retryAfter.map { ", retry after \($0.components.seconds) s" } ?? "")
    }
}

/// What a ThumbdClient call throws, besides `CancellationError` when its task was cancelled.
public enum ThumbdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 401: the listing or prefetch without a valid client key (`unauthorized`), a key past its
    /// `expires` (`key_expired`: sign in again), or `/stats` without the admin token. The server
    /// answered: this is not a network failure.
    case unauthorized(ThumbdServerError)
    /// Any other error status the server answered (400, 403, 404, 429, 503...); `retryAfter` is
    /// set for 429 and 503.
    case server(ThumbdServerError)
    /// No answer: the connection failed, was refused or timed out. `code` is the
    /// `URLError.Code` raw value (`-1004` cannot connect, `-1001` timed out...).
    case network(code: Int, description: String)
    /// An answer outside the contract: a 2xx body that is not the JSON docs/API.md promises.
    case invalidResponse(String)

    /// The server's error, for `.unauthorized` and `.server`.
    public var serverError: ThumbdServerError? {
        switch self {
        case .unauthorized(let error), .server(let error): error
        case .network, .invalidResponse: nil
        }
    }

    /// When to try again (429, 503: `Retry-After`); nil for other errors.
    public var retryAfter: Duration? { serverError?.retryAfter }

    /// The `URLError.Code` of a `.network` error.
    public var urlErrorCode: URLError.Code? {
        if case .network(let code, _) = self { return URLError.Code(rawValue: code) }
        return nil
    }

    public var description: String {
        switch self {
        case .unauthorized(let error): "unauthorized: \(error)"
        case .server(let error): "server error: \(error)"
        case .network(let code, let description): "network error \(code): \(description)"
        case .invalidResponse(let why): "invalid response: \(why)"
        }
    }

    /// The error for an answer of status 400 and more, from its JSON body and `Retry-After`.
    static func answer(status: Int, headers: [AnyHashable: Any], body: Data) -> ThumbdError {
        struct Body: Decodable { var error: String; var message: String? }
        let decoded = try? JSONDecoder().decode(Body.self, from: body)
        let retryAfter = header("Retry-After", in: headers)
            .flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            .map { Duration.seconds($0) }
        let error = ThumbdServerError(status: status, code: decoded?.error ?? "",
                                      message: decoded?.message ?? "", retryAfter: retryAfter)
        return status == 401 ? .unauthorized(error) : .server(error)
    }

    /// A transport failure (`URLError` and the like) as `.network`, or `CancellationError`
    /// for a task that was cancelled.
    static func transport(_ error: any Error) -> any Error {
        if error is CancellationError { return error }
        if let urlError = error as? URLError {
            if urlError.code == .cancelled { return CancellationError() }
            return ThumbdError.network(code: urlError.code.rawValue, description: urlError.localizedDescription)
        }
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain && nsError.code == URLError.cancelled.rawValue { return CancellationError() }
        return ThumbdError.network(code: nsError.code, description: nsError.localizedDescription)
    }
}

/// A response header's value, its name compared without case (RFC 9110 §5.1).
func header(_ name: String, in headers: [AnyHashable: Any]) -> String? {
    for (key, value) in headers {
        if let key = key as? String, key.caseInsensitiveCompare(name) == .orderedSame { return value as? String }
    }
    return nil
}
