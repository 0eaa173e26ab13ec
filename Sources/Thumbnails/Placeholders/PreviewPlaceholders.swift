import CLinux
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
/// answers at once and the placeholders arrive after it, as the backfill's do (the `generation`
/// does not change). A photo without a trusted preview is left to the backfill, which starts no
/// pass while previews are pending (`isBusy`). Unlike the backfill it does not wait for clients
/// to rest (the placeholders are wanted while a client browses), so it takes half the cores
/// (`threads`), on threads of its own at a lower CPU priority (`niceness`): the renders of a
/// client browsing meanwhile come first, and an idle server reads previews at full speed.
/// In a cluster it reads only the previews of the photos this node owns (`owns`), as the
/// backfill renders only those (docs/cluster.md, "Placeholders").
/// Thread-safe: its counts behind one `Mutex`; batches run one after another on `queue`.
public final class PreviewPlaceholders: Sendable {
    /// Reads `path`'s embedded preview if it is still the file of identity `expected`
    /// (`Renderer.embeddedPreview`); tests give another.
    public typealias Read = @Sendable (_ path: DiskPath, _ side: Int, _ expected: SourceIdentity) throws(RenderError) -> EmbeddedPreview

    let index: LibraryIndex
    let placeholders: Placeholders
    let read: Read
    /// Previews read at once: half the cores, at least one, by default.
    let threads: Int
    /// How much nicer than the process (its main thread, as the render workers are) the threads
    /// that read previews are (setpriority(2), per thread; at most 19): 10, as background
    /// indexers run, so that the kernel gives the render workers about ten times their share of
    /// a busy core.
    public static let niceness: Int32 = 10
    /// Whether this node makes `path`'s placeholder; every path by default.
    let owns: @Sendable (DiskPath) -> Bool
    private let queue = DispatchQueue(label: "thumbd.preview-placeholders", qos: .utility)
    /// Images handed over and not yet looked at.
    private let pending = Atomic(0)
    /// Set by `stop`: images not yet looked at are skipped.
    private let stopped = Atomic(false)

    /// - Parameters:
    ///   - threads: previews read at once; `0` by default: half the cores, at least one (a HEIF's
    ///     preview costs ~45 ms, docs/performance.md).
    ///   - read: how a preview is read; `Renderer.embeddedPreview` by default.
    ///   - owns: whether this node makes a path's placeholder (every path by default; in a
    ///     cluster, those the ring gives this node).
    public init(index: LibraryIndex, placeholders: Placeholders, threads: Int = 0,
                read: @escaping Read = { path, side, expected throws(RenderError) in
                    try Renderer().embeddedPreview(file: path, side: side, expected: expected)
                }, owns: @escaping @Sendable (DiskPath) -> Bool = { _ in true }) {
        self.index = index
        self.owns = owns
        self.placeholders = placeholders
        self.threads = threads > 0 ? threads : max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
        self.read = read
    }

    /// Whether images handed over wait to be looked at (or are being looked at).
    public var isBusy: Bool { pending.load(ordering: .acquiring) > 0 }

    /// Starts: each scan's new images from now on, and now the images already listed that have
    /// no placeholder (an index loaded from an earlier run, perhaps by a thumbd without previews).
    /// Call before the first scan, so none of its images is missed.
    public func start() {
        index.onFreshImages { [weak self] records in self?.enqueue(records) }
        let (_, all) = index.listing(order: .newest, offset: 0, limit: .max)
        enqueue(all)
    }

    /// Looks at `records` on `queue` (returns at once): those that still need a placeholder
    /// (`LibraryIndex.needsThumbhash`) get one from their trusted preview.
    public func enqueue(_ records: [AssetRecord]) {
        guard !records.isEmpty else { return }
        pending.add(records.count, ordering: .releasing)
        queue.async { [self] in
            // Threads of the batch's own, not Dispatch's pool: a nice value set on a pool thread
            // would stay with the work it runs next, and could not be raised back unprivileged.
            let next = Atomic(0)
            let done = DispatchGroup()
            let nice = min(19, clinux_process_nice() + Self.niceness)
            for _ in 0..<min(threads, records.count) {
                done.enter()
                Thread { [self] in
                    _ = clinux_thread_set_nice(nice)
                    while true {
                        let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
                        guard i < records.count else { break }
                        make(records[i])
                        pending.subtract(1, ordering: .releasing)
                    }
                    done.leave()
                }.start()
            }
            done.wait()
        }
    }

    /// Stops for good: images not yet looked at are skipped (a read under way finishes), so
    /// nothing is written to the index once the server has stopped.
    public func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// Blocks until every image handed over so far has been looked at (tests, benchmarks).
    public func waitUntilIdle() {
        while isBusy { queue.sync {} }
    }

    private func make(_ record: AssetRecord) {
        ThreadRole.assertNot(.eventLoop, "PreviewPlaceholders reads files")
        ThreadRole.assertNot(.renderWorker, "PreviewPlaceholders runs on its own queue, not the render workers'")
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
