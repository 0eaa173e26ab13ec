/// Whether the index's writes to its database file (`index.sqlite`) are taken: a state machine
/// fed each write's outcome with the time (uptime ns), returning the lines to say; no I/O. Its
/// driver is `LibraryIndex` (`LibraryIndex+WriteFault.swift`).
///
/// - `writing`: the last write was taken.
/// - `failing`: a write failed (SQLite said why: "database or disk is full", an I/O error);
///   the listing and the placeholders stay right in memory, and a restart reads again what
///   was not kept. Said once as it starts and once as the next write is taken, never per
///   write; `fault` is the sentence `/healthz` gives meanwhile.
struct IndexWrites: Sendable, Equatable {
    enum State: Sendable, Equatable {
        case writing
        /// Since (uptime ns), and SQLite's sentence for the first failed write.
        case failing(since: UInt64, why: String)
    }

    enum Event: Sendable, Equatable {
        /// A write (a transaction of the listing or of a placeholder) was committed.
        case written
        /// A write failed; `why`: SQLite's sentence.
        case failed(why: String)
    }

    enum Effect: Sendable, Equatable {
        /// One line for the log.
        case say(String)
    }

    /// The database file, for the sentences.
    let path: String
    private(set) var state = State.writing

    init(path: String) {
        self.path = path
    }

    /// Why the index is not kept in its file now (one sentence), or nil.
    var fault: String? {
        guard case .failing(_, let why) = state else { return nil }
        return "the library index \(path) cannot be written (\(why)): the listing is kept in memory, "
            + "and a restart reads again what was not written"
    }

    /// Feeds `event` at `now` (uptime ns) and returns what to do.
    mutating func handle(_ event: Event, at now: UInt64) -> [Effect] {
        switch (state, event) {
        case (.writing, .written), (.failing, .failed):
            return []
        case (.writing, .failed(let why)):
            state = .failing(since: now, why: why)
            return [.say("library: the index \(path) cannot be written (\(why)); the listing is kept in memory "
                         + "until it can be written again")]
        case (.failing(let since, _), .written):
            state = .writing
            return [.say("library: the index \(path) is written again, after \((now - min(since, now)) / 1_000_000_000) s")]
        }
    }
}
