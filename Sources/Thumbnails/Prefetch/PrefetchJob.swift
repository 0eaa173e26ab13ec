/// One prefetch job as `POST/GET/DELETE /prefetch` report it (docs/API.md, "Prefetch").
public struct PrefetchJob: Sendable, Equatable {
    public enum State: String, Sendable {
        case running, done, cancelled
    }

    public let id: Int
    public let grid: String
    /// The client the job belongs to (`Client.owner` in ThumbServer: `key:{id}`, `id:{name}`,
    /// `anonymous`, `admin`): only it, and the admin, see and stop the job.
    public let owner: String
    public var state: State
    /// Items asked for (after clamping the range).
    public let total: Int
    /// Items rendered (or joined to a render under way) and held by a tier now: on disk, or in
    /// memory when a client waited on the render (`WarmOutcome.done`).
    public var done = 0
    /// Items already cached: no render.
    public var skipped = 0
    /// Items missing or undecodable.
    public var failed = 0
    /// Items rendered but kept by no tier (`WarmOutcome.notStored`): a later GET renders them again.
    public var notStored = 0
    /// Why the latest item counted in `notStored` was not stored (one sentence naming the disk
    /// fault); nil while there is none.
    public var notStoredReason: String?
    /// Items dropped from the queue by a stop.
    public var cancelled = 0

    /// Items not yet accounted for (queued or running).
    public var outstanding: Int { total - done - skipped - failed - notStored - cancelled }
}
