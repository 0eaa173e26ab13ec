/// The grid's preheat, as Apple's `PHCachingImageManager` sample does it in
/// `scrollViewDidScroll`: give it the view's position on every scroll; it works out the rows to
/// warm and to let go with `ThumbdPreheatRule` and calls the caching manager, range jobs warmed
/// from the first visible cell. `update` returns at once: the calls run in the background, in
/// order per job (a stop waits for its job's start), and `settle()` waits for them.
public actor ThumbdPreheatController {
    private struct Job {
        let rows: Range<Int>
        /// The `POST /prefetch`; its job id, nil when it failed.
        let start: Task<Int?, Never>
    }

    /// The caching manager the calls go through.
    public nonisolated let caching: ThumbdCachingManager
    /// The grid being shown.
    public private(set) var grid: ThumbdGrid
    /// Its listing's order.
    public private(set) var sort: ThumbdSort
    /// The rule's state: the last preheat rect and the rows of the jobs held.
    public private(set) var rule: ThumbdPreheatRule
    /// The last error of a call (a 429 with its `retryAfter`, a network failure), nil while
    /// none failed; the rows of a start that failed are asked for again at a later update.
    public private(set) var lastError: (any Error)?
    private var jobs: [Job] = []
    /// Calls under way, by a serial number; each removes itself when answered.
    private var calls: [Int: Task<Void, Never>] = [:]
    private var nextCall = 0

    /// - Parameters:
    ///   - caching: the caching manager.
    ///   - grid: the grid the cells show (`.three`).
    ///   - columns: cells a row.
    ///   - itemCount: items of the listing (the fetch result's count).
    ///   - sort: the listing's order; `.newest` by default.
    public init(caching: ThumbdCachingManager, grid: ThumbdGrid, columns: Int, itemCount: Int, sort: ThumbdSort = .newest) {
        self.caching = caching
        self.grid = grid
        self.sort = sort
        rule = ThumbdPreheatRule(columns: columns, itemCount: itemCount)
    }

    /// The view moved: its top is at `top` rows from the grid's top (fractional: the content
    /// offset over the row pitch) and it is `height` rows high (the bounds' height over the pitch).
    /// - Returns: what the rule asked for (empty while the view moved a third of a viewport or less).
    @discardableResult
    public func update(top: Double, height: Double) -> ThumbdPreheatRule.Plan {
        let plan = rule.update(top: top, height: height)
        for rows in plan.stop {
            guard let index = jobs.firstIndex(where: { $0.rows == rows }) else { continue }
            let job = jobs.remove(at: index)
            track { [caching] in
                guard let id = await job.start.value else { return }
                do { try await caching.stopCaching(job: id) } catch { await self.failed(error, rows: nil) }
            }
        }
        for start in plan.start {
            let (grid, sort) = (self.grid, self.sort)
            let task = Task { [caching] () -> Int? in
                do {
                    return try await caching.startCaching(range: start.items, sort: sort, focus: start.focus, grid: grid).id
                } catch {
                    self.failed(error, rows: start.rows)
                    return nil
                }
            }
            jobs.append(Job(rows: start.rows, start: task))
            track { _ = await task.value }
        }
        return plan
    }

    /// The view shows listing indexes `visible` and is `viewportRows` rows high: `update` with
    /// the first visible row as `top`.
    @discardableResult
    public func update(visible: Range<Int>, viewportRows: Double) -> ThumbdPreheatRule.Plan {
        update(top: Double(visible.lowerBound / rule.columns), height: viewportRows)
    }

    /// A column, sort or listing change: every job of this client stops (`DELETE /prefetch`), then
    /// the next update starts the new grid's preheat.
    public func reset(grid: ThumbdGrid, columns: Int, itemCount: Int, sort: ThumbdSort) async {
        await settle()
        self.grid = grid
        self.sort = sort
        rule = ThumbdPreheatRule(columns: columns, itemCount: itemCount)
        jobs = []
        do { try await caching.stopCachingAll() } catch { lastError = error }
    }

    /// Stops every job (the grid goes away) and waits for the calls.
    public func stop() async {
        await reset(grid: grid, columns: rule.columns, itemCount: rule.itemCount, sort: sort)
    }

    /// Waits until every call made so far has been answered.
    public func settle() async {
        while let (_, call) = calls.first { await call.value }
    }

    private func track(_ work: @escaping @Sendable () async -> Void) {
        nextCall += 1
        let number = nextCall
        calls[number] = Task {
            await work()
            self.answered(number)
        }
    }

    private func answered(_ number: Int) {
        calls[number] = nil
    }

    private func failed(_ error: any Error, rows: Range<Int>?) {
        lastError = error
        if let rows {
            rule.forget(rows: rows)
            jobs.removeAll { $0.rows == rows }
        }
    }
}
