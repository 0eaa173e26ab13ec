import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How ThumbdClient reaches one thumbd: the base URL, the caller's identity, and two URLSessions,
/// one for the JSON API (listing, prefetch, `/stats`) and one for thumbnails, so that a prefetch
/// call never queues behind a screenful of image downloads (URLSession opens 6 connections a
/// host by default).
struct ThumbdConnection: Sendable {
    let baseURL: URL
    let clientKey: String?
    let clientID: String
    let apiSession: URLSession
    let imageSession: URLSession

    /// `baseURL` joined with an absolute path and query (`/assets?limit=0`), or an absolute URL
    /// as it is.
    func url(_ target: String) -> URL {
        URL(string: target, relativeTo: baseURL)?.absoluteURL ?? baseURL
    }

    /// A request of the API, with `Authorization: Bearer <client key>` (or `bearer`, e.g. the
    /// admin token for `/stats`) and `Thumbd-Client-Id`.
    func apiRequest(_ method: String, _ target: String, json: Data? = nil, bearer: String? = nil) -> URLRequest {
        var request = URLRequest(url: url(target))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(clientID, forHTTPHeaderField: "Thumbd-Client-Id")
        if let token = bearer ?? clientKey { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = json
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends an API request and decodes its 2xx JSON answer.
    /// - Throws: `ThumbdError` (`.unauthorized` for 401, `.server` for other error statuses,
    ///   `.network`, `.invalidResponse` for a body that is not `T`), `CancellationError`.
    func json<T: Decodable>(_ type: T.Type, _ request: URLRequest) async throws -> T {
        let (data, response) = try await send(request, on: apiSession)
        guard (200..<300).contains(response.statusCode) else {
            throw ThumbdError.answer(status: response.statusCode, headers: response.allHeaderFields, body: data)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ThumbdError.invalidResponse("\(request.httpMethod ?? "GET") \(request.url?.path ?? ""): \(error)")
        }
    }

    /// Sends `request` on `session`; cancelling the calling task cancels the `URLSessionTask`
    /// (a download under way is aborted and its connection closed, so the server sees the
    /// client leave; a request still waiting for a connection is never sent).
    /// - Throws: `ThumbdError.network`, `CancellationError`.
    func send(_ request: URLRequest, on session: URLSession) async throws -> (Data, HTTPURLResponse) {
        let slot = TaskSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, HTTPURLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: ThumbdError.transport(error))
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: ThumbdError.invalidResponse("not an HTTP response"))
                    }
                }
                if slot.hold(task) { task.resume() } else { task.cancel() }
            }
        } onCancel: {
            slot.cancel()
        }
    }
}

/// The `URLSessionTask` of one `send`, and whether its Swift task was cancelled, under one lock
/// (`NSLock`: Synchronization's `Mutex` needs iOS 18): a cancel that comes before the task exists
/// cancels it as it is made.
final class TaskSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var cancelled = false

    /// Keeps `task`; false when the cancel came first (the caller cancels it instead of resuming).
    func hold(_ task: URLSessionTask) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        self.task = task
        return !cancelled
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}
