import Dispatch
import Foundation
import Library
import Locking
import Rendering
import Synchronization

/// Makes the placeholders of photos from their embedded previews as the scans list them (issue
/// 28; docs/API.md, "Listing": `thumbhash`): the EXIF thumbnail of a JPEG, the thumbnail item of
/// a HEIF, trusted when its shape after the photo's orientation is the photo's
/// (`Renderer.embeddedPreview`). The photo is not decoded. Off the scan's path: the scan hands
/// over the images it listed anew (`LibraryIndex.onFreshImages`) and returns, so the listing
/// answers at once and the placeholders arrive after it. A photo without a trusted preview is
/// left to the backfill, which starts no pass while previews are pending (`isBusy`). Unlike the
/// backfill it does not wait for clients to rest (the placeholders are wanted while a client
/// browses): each read is an item of the render scheduler's preview lane
/// (`RenderScheduler.Priority.preview`: after client misses, before prefetch), each batch
/// newest first, the order a grid shows, and those at the top of the listing (its
/// `firstScreens`) before client misses. In a cluster it reads only the previews of the photos
/// this node owns (`owns`), as the backfill renders only those (docs/cluster.md,
/// "Placeholders").
/// Thread-safe: its state is atomics; reads run on the scheduler's workers.
public final class PreviewPlaceholders: Sendable {
    /// Reads `path`'s embedded preview if it is still the file of identity `expected`
    /// (`Renderer.embeddedPreview`); tests give another.
    public typealias Read = @Sendable (_ path: DiskPath, _ side: Int, _ expected: SourceIdentity) throws(RenderError) -> EmbeddedPreview

    let index: LibraryIndex
    let placeholders: Placeholders
    let scheduler: RenderScheduler
    let read: Read
    /// Whether this node makes `path`'s placeholder; every path by default.
    let owns: @Sendable (DiskPath) -> Bool
    /// Entered per image handed over, left once it is looked at or skipped (`isBusy`,
    /// `waitUntilIdle`).
    private let outstanding = DispatchGroup()
    /// Set by `stop`: images not yet looked at are skipped.
    private let stopped = Atomic(false)

    /// - Parameters:
    ///   - scheduler: whose preview lane reads them (the pipeline's).
    ///   - read: how a preview is read; `Renderer.embeddedPreview` by default.
    ///   - owns: whether this node makes a path's placeholder (every path by default; in a
    ///     cluster, those the ring gives this node).
    public init(index: LibraryIndex, placeholders: Placeholders, scheduler: RenderScheduler,
                read: @escaping Read = { path, side, expected throws(RenderError) in
                    try Renderer().embeddedPreview(file: path, side: side, expected: expected)
                }, owns: @escaping @Sendable (DiskPath) -> Bool = { _ in true }) {
        self.index = index
        self.owns = owns
        self.placeholders = placeholders
        self.scheduler = scheduler
        self.read = read
    }

    /// Whether images handed over wait to be looked at (or are being looked at).
    public var isBusy: Bool { outstanding.wait(timeout: .now()) == .timedOut }

    /// Starts: each scan's new images from now on, and now the images already listed that have
    /// no placeholder (an index loaded from an earlier run, perhaps by a thumbd without previews).
    /// Call before the first scan, so none of its images is missed.
    public func start() {
        index.onFreshImages { [weak self] records in self?.enqueue(records) }
        let (_, all) = index.listing(order: .newest, offset: 0, limit: .max)
        enqueue(all)
    }

    /// How many of the listing's newest photos are a grid's first screens, whose previews go
    /// before client misses (`RenderScheduler.Priority.preview(firstScreens:)`): 60, a phone's
    /// screen at 5 columns (12 rows), two and a half at 3 columns (7 rows).
    public static let firstScreens = 60

    /// Queues `records` on the scheduler's preview lane, newest first (returns at once), those
    /// among the listing's `firstScreens` newest ahead of client misses: those that still need a
    /// placeholder when their turn comes (`LibraryIndex.needsThumbhash`) get one from their
    /// trusted preview.
    public func enqueue(_ records: [AssetRecord]) {
        guard !records.isEmpty else { return }
        let top = Set(index.page(order: .newest, from: .offset(0), limit: Self.firstScreens).items.map(\.path))
        for _ in records { outstanding.enter() }   // all before any is read: busy throughout
        for record in records.sorted(by: { $0.listingKey.precedes($1.listingKey, in: .newest) }) {
            scheduler.enqueue(.preview(firstScreens: top.contains(record.path))) { [self] in
                make(record)
                outstanding.leave()
            }
        }
    }

    /// Stops for good: images not yet looked at are skipped (a read under way finishes), so
    /// nothing is written to the index once the server has stopped.
    public func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// Blocks until every image handed over so far has been looked at (tests, benchmarks).
    public func waitUntilIdle() {
        outstanding.wait()
    }

    private func make(_ record: AssetRecord) {
        ThreadRole.assertCurrent(.renderWorker, "PreviewPlaceholders reads files on the render scheduler's preview lane")
        guard !stopped.load(ordering: .acquiring), record.durationMilliseconds == nil, owns(record.path),
              index.needsThumbhash(record.path, source: record.identity) else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        // Resolved as a request's URL is (inside the root, no dot-file on the way), as the
        // backfill does; gone or changed meanwhile: the next scan tells.
        let names = record.path.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        guard let asset = try? index.library.resolve(names: names), asset.identity == record.identity else { return }
        let preview = try? read(asset.absolutePath, Placeholders.side, record.identity)
        let microseconds = Int((DispatchTime.now().uptimeNanoseconds - started) / 1000)
        if case .mismatched = preview {
            placeholders.recordPreviewRead(microseconds: microseconds, mismatched: true)
        } else {
            placeholders.recordPreviewRead(microseconds: microseconds, mismatched: false)
        }
        if case .placeholder(let image) = preview {
            placeholders.take(image, for: record.path, source: record.identity, from: .preview)
        }
    }
}
