/// A prefetch job as `POST /prefetch` (202), `GET`/`DELETE /prefetch/{id}` (200) answer it and
/// `DELETE /prefetch` lists it (`PrefetchJobListBody`) (docs/API.md, "Prefetch"): what clients
/// read, and what a node reads of the parts it forwarded to other nodes (`ClusterPrefetch`).
/// Decoding refuses what no node writes: a missing field, a count below 0, another `state`.
struct PrefetchJobBody: Codable, Sendable, Equatable {
    /// `id`: the job's id, the node's own (docs/API.md: random below 2^40 for a run's first).
    var id: Int
    /// `grid`: the grid's name, e.g. `"3"`.
    var grid: String
    /// `state`: `running`, `done` or `cancelled` (both final).
    var state: String
    /// `total`: the items the job named, on every node.
    var total: Int
    /// `done`: items rendered and kept by a cache tier.
    var done: Int
    /// `skipped`: items already cached.
    var skipped: Int
    /// `failed`: items missing or undecodable (or refused by their node).
    var failed: Int
    /// `not_stored`: items rendered but kept by neither tier.
    var notStored: Int
    /// `cancelled`: items a stop dropped.
    var cancelled: Int
    /// `not_stored_reason`: one sentence naming the fault of the latest `not_stored` item;
    /// `null` while there is none (always present).
    var notStoredReason: String?
    /// `part_of` (`{"node": N, "id": J}`), only in a node's answer to another node's stop-all:
    /// the job on node `N` (its index in `peers`) this job is a part of; absent otherwise.
    var partOf: ClusterPrefetch.PartKey?

    /// The states a job may be in.
    static let states: Set<String> = ["running", "done", "cancelled"]

    private enum CodingKeys: String, CodingKey {
        case id, grid, state, total, done, skipped, failed, notStored = "not_stored", cancelled
        case notStoredReason = "not_stored_reason", partOf = "part_of"
    }

    /// Job `counts.id` of `grid`.
    init(grid: String, counts: PrefetchCounts, notStoredReason: String?, partOf: ClusterPrefetch.PartKey? = nil) {
        id = counts.id
        self.grid = grid
        state = counts.state
        total = counts.total; done = counts.done; skipped = counts.skipped; failed = counts.failed
        notStored = counts.notStored; cancelled = counts.cancelled
        self.notStoredReason = notStoredReason
        self.partOf = partOf
    }

    /// The job's state and counts.
    var counts: PrefetchCounts {
        var counts = PrefetchCounts(id: id, state: state)
        counts.total = total; counts.done = done; counts.skipped = skipped; counts.failed = failed
        counts.notStored = notStored; counts.cancelled = cancelled
        return counts
    }

    /// - Throws: `DecodingError` for a missing field (`not_stored_reason` too: `null`, not
    ///   absent, says there is none), a field of another type, a count below 0 or an unknown
    ///   `state`.
    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int {
            let value = try fields.decode(Int.self, forKey: key)
            guard value >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: fields, debugDescription: "a count below 0")
            }
            return value
        }
        id = try count(.id)
        grid = try fields.decode(String.self, forKey: .grid)
        state = try fields.decode(String.self, forKey: .state)
        guard Self.states.contains(state) else {
            throw DecodingError.dataCorruptedError(forKey: .state, in: fields, debugDescription: "not a job's state")
        }
        total = try count(.total); done = try count(.done); skipped = try count(.skipped); failed = try count(.failed)
        notStored = try count(.notStored); cancelled = try count(.cancelled)
        notStoredReason = try fields.decode(String?.self, forKey: .notStoredReason)
        partOf = try fields.decodeIfPresent(ClusterPrefetch.PartKey.self, forKey: .partOf)
    }

    func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        try fields.encode(id, forKey: .id)
        try fields.encode(grid, forKey: .grid)
        try fields.encode(state, forKey: .state)
        try fields.encode(total, forKey: .total)
        try fields.encode(done, forKey: .done)
        try fields.encode(skipped, forKey: .skipped)
        try fields.encode(failed, forKey: .failed)
        try fields.encode(notStored, forKey: .notStored)
        try fields.encode(cancelled, forKey: .cancelled)
        try fields.encode(notStoredReason, forKey: .notStoredReason)   // null, never absent
        try fields.encodeIfPresent(partOf, forKey: .partOf)
    }
}
