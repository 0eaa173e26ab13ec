import Dispatch
import Library
import Rendering
import Synchronization
import ThumbHash

/// Where placeholders are kept: the library index in a server (`LibraryIndex+Thumbhash`).
public protocol ThumbhashStore: Sendable {
    /// Whether a render of `path` at identity `source` should make its placeholder.
    func needsThumbhash(_ path: DiskPath, source: SourceIdentity) -> Bool
    /// Keeps `hash` for `path` at identity `source` (empty: the source cannot be rendered).
    func storeThumbhash(_ hash: [UInt8], for path: DiskPath, source: SourceIdentity)
    /// Forgets `path`'s placeholder: its source may not be read now (its permissions), so its
    /// picture is not to be shown; a later render that reads it makes it again.
    func forgetThumbhash(for path: DiskPath)
}

extension LibraryIndex: ThumbhashStore {}

/// The placeholders the pipeline's renders make (docs/API.md, "Listing": `thumbhash`): the first
/// render of an asset that has none, at any grid, also shrinks its pixels to at most
/// `side` x `side` px (no second decode: `RenderRequest.placeholderSide`), and the ThumbHash of
/// that goes to the store. A photo's embedded preview makes one at the scan that lists it
/// (`PreviewPlaceholders`); the backfill (`ThumbhashBackfill`) makes the rest. Counts and costs
/// for `/stats` (`placeholders`). Thread-safe: the store is given at init; the counters are behind a `Mutex`.
public final class Placeholders: Sendable {
    /// The largest side of the image a hash is made from, px: ThumbHash's limit.
    public static let side = ThumbHash.maximumSide

    /// Who made a placeholder.
    public enum Origin: Sendable {
        /// A client's or a prefetch's render.
        case render
        /// The backfill's render of the whole photo.
        case backfill
        /// The file's embedded preview (`PreviewPlaceholders`).
        case preview
    }

    /// What `/stats` reports.
    public struct Statistics: Sendable, Equatable {
        /// Placeholders made beside a client's or a prefetch's render, by the backfill, and from
        /// embedded previews.
        public var fromRenders = 0, backfilled = 0, fromPreviews = 0
        /// Embedded previews read and not trusted: their shape is not the photo's.
        public var previewsMismatched = 0
        /// Reading embedded previews (header, preview, its decode and shrink; hashing and storing
        /// not included), total, µs; and previews read (any outcome).
        public var previewReadMicroseconds = 0, previewReads = 0
        /// Backfill renders that failed (the source cannot be rendered: noted, not tried again
        /// until it changes; or could not be read now: tried again at the next pass).
        public var backfillFailed = 0
        /// Shrinking a render's pixels to the placeholder image, hashing it, and keeping the hash
        /// in the store (the index's SQLite row, under its lock): totals, µs.
        public var shrinkMicroseconds = 0, encodeMicroseconds = 0, storeMicroseconds = 0
        /// The backfill's renders (decode, 100 px, shrink), total, µs.
        public var backfillRenderMicroseconds = 0
    }

    /// Where the hashes go (the library index); nil: none are made.
    let store: (any ThumbhashStore)?
    private let state = Mutex(Statistics())

    /// `store`: where the hashes go; nil: none are made.
    public init(store: (any ThumbhashStore)?) {
        self.store = store
    }

    /// The counts and costs since start, read at one moment.
    public var statistics: Statistics { state.withLock { $0 } }

    /// The placeholder side a render of `key` should ask for: `side` when its asset has none
    /// made from this version of the file, else 0.
    func side(for key: CacheKey) -> Int {
        guard let store else { return 0 }
        return store.needsThumbhash(key.assetPath, source: key.source) ? Self.side : 0
    }

    /// Hashes a render's placeholder image and keeps it for `path` at `source`. Returns false
    /// when there was none to keep (not asked for, or libvips could not make it).
    @discardableResult
    func take(_ image: PlaceholderImage?, for path: DiskPath, source: SourceIdentity, from origin: Origin) -> Bool {
        guard let image, let store else { return false }
        let started = DispatchTime.now().uptimeNanoseconds
        guard let hash = try? ThumbHash.encode(width: image.width, height: image.height, rgba: image.rgba) else { return false }
        let encoded = DispatchTime.now().uptimeNanoseconds
        let encode = Int((encoded - started) / 1000)
        store.storeThumbhash(hash, for: path, source: source)
        let stored = Int((DispatchTime.now().uptimeNanoseconds - encoded) / 1000)
        state.withLock { s in
            switch origin {
            case .render: s.fromRenders += 1
            case .backfill: s.backfilled += 1
            case .preview: s.fromPreviews += 1
            }
            s.shrinkMicroseconds += image.microseconds
            s.encodeMicroseconds += encode
            s.storeMicroseconds += stored
        }
        return true
    }

    /// `path`'s source could not be read (a render, or the resolving of its URL, answered 403):
    /// its placeholder leaves the listing with it, so that the listing shows no more of the
    /// photo than its thumbnail does: at its publication, a change the feed tells
    /// (`LibraryIndex.forgetThumbhash`).
    public func forget(_ path: DiskPath) {
        store?.forgetThumbhash(for: path)
    }

    /// Notes that the source of `path` at `source` cannot be rendered (415, 422, from a client's
    /// render or the backfill's): no placeholder is made for it until it changes, and one its
    /// embedded preview gave is taken away (docs/API.md: `null` for such a file).
    func noteUnrenderable(_ path: DiskPath, source: SourceIdentity) {
        store?.storeThumbhash([], for: path, source: source)
    }

    func recordBackfillFailure() {
        state.withLock { $0.backfillFailed += 1 }
    }

    func recordPreviewRead(microseconds: Int, mismatched: Bool) {
        state.withLock { s in
            s.previewReads += 1
            s.previewReadMicroseconds += microseconds
            if mismatched { s.previewsMismatched += 1 }
        }
    }

    func recordBackfillRender(microseconds: Int) {
        state.withLock { $0.backfillRenderMicroseconds += microseconds }
    }
}
