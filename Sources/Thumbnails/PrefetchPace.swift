/// Whether prefetch keeps ahead of the clients it works for, and what the render scheduler does
/// when it does not: a value the scheduler keeps under its lock.
///
/// Each queued prefetch item is due by the time the pool should reach it at the measured render
/// time: its place in its job times the render time per worker, plus `slackNanoseconds`. A
/// client miss for an item still queued past that time means prefetch has fallen behind the
/// scroll: the client reached a cell its preheat asked for and the pool never got to it (first
/// come, the client misses of a scroll faster than the renders take every worker, and prefetch
/// never runs again). For `catchUpNanoseconds` after such a late miss the scheduler runs
/// `backgroundPerForeground` prefetch items (newest job first: the rows about to appear) for
/// each client miss while both wait, instead of client misses first, so the pool gets ahead of
/// the scroll again and the cells that appear next are ready. Cells the client asked for late
/// tend to scroll off before their render would end. Measured with a model of scroll.py
/// (a discrete-event replay of its client and this scheduler) and with
/// `Tests/Benchmarks/scroll.sh`: the figures are in docs/performance.md.
struct PrefetchPace {
    /// How long catching up lasts after the last late client miss, ns: 1 s.
    static let catchUpNanoseconds: UInt64 = 1_000_000_000
    /// Prefetch items run for each client miss while catching up: 2.
    static let backgroundPerForeground = 2
    /// The render time assumed before one was measured, ns: 100 ms (a phone photo at grid 3).
    static let initialRenderNanoseconds: UInt64 = 100_000_000
    /// Work that took less than this is not a render (a skipped or dropped item), ns: 2 ms.
    static let shortestRenderNanoseconds: UInt64 = 2_000_000

    /// How late past its place in the queue an item may be before a client miss counts, ns.
    let slackNanoseconds: UInt64
    /// Render workers (the pool reaches `workers` items per render time).
    let workers: Int
    /// Moving average of recent render durations (weight 1/8 for the newest), ns.
    private(set) var renderNanoseconds: UInt64
    /// When each queued prefetch item is due (uptime ns), by digest.
    private var due: [String: UInt64] = [:]
    /// Catching up until this uptime (ns); 0 when never.
    private var catchUpUntil: UInt64 = 0
    private var picks = 0
    /// Client misses for prefetch items past their due time, since start.
    private(set) var lateMisses = 0

    /// - Parameters:
    ///   - workers: the pool's worker threads (≥ 1).
    ///   - slackNanoseconds: lateness allowed past an item's place (default 100 ms).
    ///   - renderNanoseconds: the render time to assume until one is measured (default 100 ms).
    init(workers: Int, slackNanoseconds: UInt64 = 100_000_000,
         renderNanoseconds: UInt64 = PrefetchPace.initialRenderNanoseconds) {
        self.workers = max(1, workers)
        self.slackNanoseconds = slackNanoseconds
        self.renderNanoseconds = max(1, renderNanoseconds)
    }

    /// A prefetch item for `key` was queued at `now` with `position` items of its job ahead of it.
    mutating func queued(_ key: String, position: Int, now: UInt64) {
        let wait = UInt64(position + 1) &* renderNanoseconds / UInt64(workers)
        due[key] = now &+ wait &+ slackNanoseconds
    }

    /// The prefetch item for `key` left the queue (ran, or its job was stopped).
    mutating func left(_ key: String) {
        due[key] = nil
    }

    /// A client missed `key` at `now`. Returns true, and starts catching up, when a prefetch item
    /// for it is still queued past its due time.
    mutating func clientMissed(_ key: String, now: UInt64) -> Bool {
        guard let due = due[key], now > due else { return false }
        lateMisses += 1
        catchUpUntil = now &+ Self.catchUpNanoseconds
        return true
    }

    /// Whether catching up is on at `now`.
    func catchingUp(at now: UInt64) -> Bool { now < catchUpUntil }

    /// With both queues waiting at `now`: whether the next item is prefetch work. Client misses
    /// first unless catching up; then `backgroundPerForeground` prefetch items per client miss.
    mutating func backgroundGoesFirst(at now: UInt64) -> Bool {
        guard catchingUp(at: now) else { return false }
        picks += 1
        return picks % (Self.backgroundPerForeground + 1) != 0
    }

    /// A work item took `nanoseconds`; renders (not shorter ones) update the moving average.
    mutating func ran(for nanoseconds: UInt64) {
        guard nanoseconds >= Self.shortestRenderNanoseconds else { return }
        renderNanoseconds = max(1, (renderNanoseconds * 7 + nanoseconds) / 8)
    }

    /// Prefetch items waiting with a due time (for tests and `/stats`).
    var queuedCount: Int { due.count }
}
