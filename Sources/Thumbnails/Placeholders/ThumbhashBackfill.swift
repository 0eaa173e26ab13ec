import Dispatch
import Library
import Rendering
import Synchronization

/// Makes the placeholders of listed images no render has made one for (docs/API.md, "Listing":
/// `thumbhash`), at the lowest priority: one render at a time on the scheduler's idle queue,
/// which starts one only once no client miss and no prefetch item has waited or run for a second
/// (`RenderScheduler.Priority.idle`). A pass walks the listing newest first (what a grid shows
/// first) from a cursor; when it reaches the end the backfill rests until the listed images
/// change (`LibraryIndex.recordsGeneration`: the placeholders it makes do not count), so an
/// unchanged library is backfilled once, and since made placeholders (and notes that a source
/// cannot be rendered) are kept in the index, a restart does not redo them. Each render decodes its source with shrink-on-load into `box` (at most 100x100 px) and
/// is not cached: only its placeholder is kept. No pass begins while embedded previews are being
/// read (`PreviewPlaceholders.isBusy`): a photo with a trusted preview needs no render. In a
/// cluster it makes only the placeholders of the photos this node owns (`owns`: the ring's
/// owner, docs/cluster.md, "Placeholders"); the others' come from their owners.
/// Thread-safe: its state behind one `Mutex`; at most one step is queued or running at a time.
public final class ThumbhashBackfill: Sendable {
    /// What `/stats` reports of it (`placeholders.backfill_*`).
    public struct Statistics: Sendable, Equatable {
        /// Whether it was started (`thumbhash_backfill`), and whether a pass is under way now.
        public var enabled = false, running = false
        /// Passes finished since start (the first covers the whole listing; each later one
        /// follows a change of the listing).
        public var passes = 0
        /// Seconds passes have run (wall clock, yielding included), and renders in them.
        public var seconds = 0.0
        public var renders = 0
    }

    let index: LibraryIndex
    let pipeline: ThumbnailPipeline
    /// Whose pending work a pass waits for; nil: none.
    let previews: PreviewPlaceholders?
    /// The box and fit of its renders: at most `Placeholders.side` px a side.
    public let box: GridSpec
    /// Seconds between looks at the listing's generation while at rest. `2` by default.
    let restSeconds: Double
    /// Whether this node makes `path`'s placeholder (a cluster's ring names it); all paths by default.
    let owns: @Sendable (DiskPath) -> Bool
    /// Records looked at per step for one that needs a placeholder.
    static let pageSize = 256

    private struct State {
        var statistics = Statistics()
        /// Where the pass has got to: the last record it looked at (newest first).
        var cursor: ListingKey?
        /// The generation the pass under way started at; nil while at rest.
        var generation: Int?
        /// The generation the last finished pass started at.
        var lastGeneration: Int?
        var passStarted: UInt64 = 0
        /// Whether a step is queued or running (one chain of steps at a time).
        var busy = false
        var stopped = false
    }

    private let state = Mutex(State())

    /// Renders into a `Placeholders.side` box with the whole photo at its aspect ratio
    /// (`contain`), as a render's placeholder is. `previews`: the embedded previews' maker, whose
    /// pending work a pass waits for; nil: none. `owns`: whether this node makes a path's
    /// placeholder (every path by default; in a cluster, those the ring gives this node).
    public init(index: LibraryIndex, pipeline: ThumbnailPipeline, previews: PreviewPlaceholders? = nil, restSeconds: Double = 2,
                owns: @escaping @Sendable (DiskPath) -> Bool = { _ in true }) {
        self.index = index
        self.owns = owns
        self.pipeline = pipeline
        self.previews = previews
        box = GridSpec(name: "thumbhash", width: Placeholders.side, height: Placeholders.side, fit: .contain)
        self.restSeconds = restSeconds
    }

    /// Its counts since start, the pass under way included (`seconds` up to now).
    public var statistics: Statistics {
        state.withLock { s in
            var statistics = s.statistics
            if s.generation != nil { statistics.seconds += Self.seconds(since: s.passStarted) }
            return statistics
        }
    }

    /// Starts the first pass (once the listing is whole).
    public func start() {
        state.withLock { $0.statistics.enabled = true }
        rest()
    }

    /// Stops for good: no further step is queued (one running finishes).
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// At rest: looks at the listing every `restSeconds`, and starts a pass when it is whole and
    /// its generation is not the one the last pass saw, and no embedded preview waits to be read.
    private func rest() {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + restSeconds) { [weak self] in
            self?.wake()
        }
    }

    private func wake() {
        let generation = index.recordsGeneration
        let begin = state.withLock { s -> Bool in
            guard !s.stopped, !s.busy else { return false }
            guard index.isComplete, previews?.isBusy != true,
                  s.statistics.passes == 0 || s.lastGeneration != generation else { return false }
            s.generation = generation
            s.cursor = nil
            s.passStarted = DispatchTime.now().uptimeNanoseconds
            s.statistics.running = true
            s.busy = true
            return true
        }
        if begin { step() } else if !state.withLock({ $0.stopped || $0.busy }) { rest() }
    }

    /// Finds the next record of the pass that needs a placeholder and queues its render on the
    /// idle queue; at the end of the listing, ends the pass and rests.
    private func step() {
        let cursor = state.withLock { $0.cursor }
        var start = cursor.map { ListingStart.after($0) } ?? .offset(0)
        while true {
            if state.withLock({ $0.stopped }) { return }
            let page = index.page(order: .newest, from: start, limit: Self.pageSize)
            guard let last = page.items.last else { return endPass() }
            if let record = page.items.first(where: { owns($0.path) && index.needsThumbhash($0.path, source: $0.identity) }) {
                state.withLock { $0.cursor = record.listingKey }
                let queued = pipeline.scheduler.enqueue(.idle) { [self] in
                    render(record)
                    step()
                }
                if !queued { endPass() }
                return
            }
            state.withLock { $0.cursor = last.listingKey }
            start = .after(last.listingKey)
        }
    }

    private func endPass() {
        state.withLock { s in
            s.statistics.passes += 1
            s.statistics.seconds += Self.seconds(since: s.passStarted)
            s.statistics.running = false
            s.lastGeneration = s.generation
            s.generation = nil
            s.busy = false
        }
        rest()
    }

    /// Renders `record` into `box` for its placeholder only. A source that cannot be rendered
    /// (415, 422) is noted, so it is not tried again until it changes; one that cannot be read
    /// now is left for a later pass.
    private func render(_ record: AssetRecord) {
        let started = DispatchTime.now().uptimeNanoseconds
        defer {
            let microseconds = Int((DispatchTime.now().uptimeNanoseconds - started) / 1000)
            state.withLock { $0.statistics.renders += 1 }
            pipeline.placeholders.recordBackfillRender(microseconds: microseconds)
        }
        let names = record.path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        guard let asset = try? index.library.resolve(names: names), asset.identity == record.identity else {
            pipeline.placeholders.recordBackfillFailure()   // changed or gone: the next scan tells
            return
        }
        let limit = pipeline.configuration.maxSourceBytes
        if limit > 0, asset.identity.size > limit {
            pipeline.placeholders.noteUnrenderable(record.path, source: record.identity)
            pipeline.placeholders.recordBackfillFailure()
            return
        }
        var request = RenderRequest(source: asset.absolutePath, spec: box, format: .jpeg, quality: 50,
                                    maxPixels: pipeline.configuration.maxSourcePixels, expectedSource: asset.identity)
        request.placeholderSide = Placeholders.side
        do {
            let thumbnail = try pipeline.renderer.render(request)
            if !pipeline.placeholders.take(thumbnail.placeholder, for: record.path, source: record.identity, from: .backfill) {
                pipeline.placeholders.recordBackfillFailure()
            }
        } catch {
            switch error.kind {
            case .unsupportedSource, .sourceTooLarge:
                pipeline.placeholders.noteUnrenderable(record.path, source: record.identity)
                pipeline.placeholders.recordBackfillFailure()
            default:
                pipeline.placeholders.recordBackfillFailure()
            }
        }
    }

    static func seconds(since uptime: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds &- uptime) / 1e9
    }
}
