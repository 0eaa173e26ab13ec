import Thumbnails

/// A prefetch job's state and counts as its body gives them (`PrefetchJobBody`, docs/API.md,
/// "Prefetch"): what a node reads of a part it forwarded to another node, and what the parts of
/// one job add up to.
struct PrefetchCounts: Sendable, Equatable {
    var id: Int
    /// `running`, `done` or `cancelled`.
    var state: String
    var total = 0, done = 0, skipped = 0, failed = 0, notStored = 0, cancelled = 0

    init(id: Int, state: String) {
        self.id = id
        self.state = state
    }

    init(_ job: PrefetchJob) {
        self.init(id: job.id, state: job.state.rawValue)
        total = job.total; done = job.done; skipped = job.skipped; failed = job.failed
        notStored = job.notStored; cancelled = job.cancelled
    }

    /// Items not yet accounted for.
    var outstanding: Int { max(0, total - done - skipped - failed - notStored - cancelled) }

    /// As a stop leaves it when its node could not be asked: the outstanding items cancelled.
    func stopped() -> PrefetchCounts {
        var counts = self
        counts.cancelled += outstanding
        counts.state = "cancelled"
        return counts
    }

    /// As a part whose node no longer answers for it is counted: the outstanding items failed,
    /// and ended.
    func lost() -> PrefetchCounts {
        var counts = self
        counts.failed += outstanding
        counts.state = "done"
        return counts
    }

    /// This job's counts with `parts`' added (the id stays this one's): running while any part
    /// runs, else cancelled when any was stopped, else done.
    func adding(_ parts: [PrefetchCounts]) -> PrefetchCounts {
        var sum = self
        for part in parts {
            sum.total += part.total; sum.done += part.done; sum.skipped += part.skipped; sum.failed += part.failed
            sum.notStored += part.notStored; sum.cancelled += part.cancelled
        }
        let states = [state] + parts.map(\.state)
        sum.state = states.contains("running") ? "running" : states.contains("cancelled") ? "cancelled" : "done"
        return sum
    }
}
