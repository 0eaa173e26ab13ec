/// The preheat rule of Apple's `PHCachingImageManager` sample (`updateCachedAssets`), in rows,
/// as a value: scroll positions in, prefetch ranges to start and jobs to stop out. The gallery's
/// `gallery-preheat.js` (`preheatPlan`) follows the same rule, and both are tested against one
/// table, `Tests/Fixtures/preheat-cases.json`.
///
/// The rule: the preheat rect is the visible rows grown by half a viewport above and below,
/// `floor(top - height / 2) ..< ceil(top + height + height / 2)` clamped to the grid; it is
/// recomputed only once its middle (`top + height / 2`) moved more than a third of a viewport
/// (`height / 3`) from the last one's (the first update always computes). Rows of the rect that no
/// job of ours holds start one job per contiguous run, warmed from the first visible cell
/// (`focus = floor(top) * columns`, at most the item count); a job with no row left in the
/// rect is stopped. A job covers its rows until it is stopped, even once finished, so rows
/// scrolled back to are not asked for twice.
public struct ThumbdPreheatRule: Sendable, Equatable {
    /// A job to start: its rows, the listing indexes they hold, and where to warm first.
    public struct Start: Sendable, Equatable {
        /// Rows, `upperBound` exclusive.
        public var rows: Range<Int>
        /// Listing indexes: `rows.lowerBound * columns ..< min(itemCount, rows.upperBound * columns)`.
        public var items: Range<Int>
        /// The first visible cell's index.
        public var focus: Int
    }

    /// What one update asks for.
    public struct Plan: Sendable, Equatable {
        /// Jobs to start, top to bottom.
        public var start: [Start] = []
        /// Rows of the jobs to stop, in the order they were started.
        public var stop: [Range<Int>] = []
        public var isEmpty: Bool { start.isEmpty && stop.isEmpty }
    }

    /// Cells a row.
    public let columns: Int
    /// Items of the listing.
    public let itemCount: Int
    /// Rows of the grid: `ceil(itemCount / columns)`.
    public var rowCount: Int { (itemCount + columns - 1) / columns }
    /// The rows of the last preheat rect; nil before the first update and after `reset()`.
    public private(set) var rect: Range<Int>?
    /// The rows of the jobs held, in the order they were started.
    public private(set) var jobs: [Range<Int>] = []
    private var middle = 0.0

    /// - Parameters:
    ///   - columns: cells a row, ≥ 1.
    ///   - itemCount: items of the listing, ≥ 0.
    public init(columns: Int, itemCount: Int) {
        self.columns = max(1, columns)
        self.itemCount = max(0, itemCount)
    }

    /// The view is at `top` (rows from the grid's top, fractional) and `height` rows high.
    public mutating func update(top: Double, height: Double) -> Plan {
        let middle = top + height / 2
        if rect != nil && abs(middle - self.middle) <= height / 3 { return Plan() }
        let lower = max(0, Int((top - height / 2).rounded(.down)))
        let upper = min(rowCount, Int((top + height + height / 2).rounded(.up)))
        let wanted = lower..<max(lower, upper)
        let focus = min(itemCount, max(0, Int(top.rounded(.down))) * columns)
        var plan = Plan()
        var row = wanted.lowerBound
        while row < wanted.upperBound {
            if jobs.contains(where: { $0.contains(row) }) { row += 1; continue }
            var end = row + 1
            while end < wanted.upperBound && !jobs.contains(where: { $0.contains(end) }) { end += 1 }
            plan.start.append(Start(rows: row..<end, items: row * columns..<min(itemCount, end * columns), focus: focus))
            row = end
        }
        plan.stop = jobs.filter { !$0.overlaps(wanted) }
        jobs = jobs.filter { $0.overlaps(wanted) } + plan.start.map(\.rows)
        rect = wanted
        self.middle = middle
        return plan
    }

    /// A job that could not be started (refused, the network down): its rows are free again,
    /// and the next update that moves asks for them.
    public mutating func forget(rows: Range<Int>) {
        jobs.removeAll { $0 == rows }
    }

    /// A column or sort change: every job is let go (the caller stops them all) and the next
    /// update starts afresh.
    public mutating func reset() {
        rect = nil
        jobs = []
        middle = 0
    }
}
