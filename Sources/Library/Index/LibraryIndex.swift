import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The library listing (docs/API.md, `GET /assets`): every image under the root with its displayed
/// size and capture time, read from headers only (no decode), persisted in SQLite under the cache
/// directory so a restart answers at once without reading headers again.
///
/// `rescan()` walks the tree with `lstat` and reads the header only of files that are new or whose
/// size or mtime changed; removed files are dropped. `startWatching` rescans every few seconds.
/// Listings are served from two sorted arrays kept in memory. Thread-safe: the records sit behind
/// one `Mutex`, the database behind another; one scan runs at a time (`scanLock`).
public final class LibraryIndex: Sendable {
    /// Reads one file's header. A `.unsupportedSource` failure means the file was read and is
    /// not an image libvips knows (remembered until the file changes); any other failure means
    /// it could not be read now (permissions, I/O, descriptors) and it is tried again next scan.
    public typealias Probe = @Sendable (DiskPath) -> Result<SourceInfo, RenderError>
    /// Opens a directory for the walk (`opendir(3)`); nil with `errno` set when it cannot.
    typealias OpenDirectory = @Sendable (DiskPath) -> OpaquePointer?
    /// Schedules `publish` (a publication of the placeholders that arrived) to run once, later:
    /// `afterPublicationDelay` in a server; a test's table may never run it, and publish itself.
    typealias SchedulePublication = @Sendable (_ publish: @escaping @Sendable () -> Void) -> Void

    /// What one scan found.
    public struct ScanSummary: Sendable, Equatable {
        /// Images new to the index; files read again for a new size or mtime that are images
        /// now or were (one that became or stopped being an image counts here); images gone.
        public var added = 0, changed = 0, removed = 0
        /// Headers read (files probed) during the scan.
        public var headerReads = 0
        /// Files whose header could not be read (not "not an image": unreadable now), and
        /// directories that could not be listed (whose records were kept as they were).
        public var unreadableFiles = 0, unreadableDirectories = 0
        /// A scan that found nothing to do: every count 0.
        public init() {}
    }

    struct State {
        /// Keyed by asset path as on disk, byte for byte: two names that differ only in Unicode
        /// form are two assets (a `String` key would merge them).
        var records: [DiskPath: AssetRecord] = [:]
        /// Files that are not images, remembered with their identity so they are not probed again.
        var nonImages: [DiskPath: SourceIdentity] = [:]
        /// Files in a format the listing takes whose header does not decode
        /// (`RenderError.isUndecodable`: a lossless JPEG, SOF3), with their identity: not
        /// listed, not probed again until they change, and kept in memory only (not as non-images
        /// in the database), so that a restart reads them again and counts and says them anew.
        var undecodable: [DiskPath: SourceIdentity] = [:]
        /// Each directory (relative to the root) holding entries, with how many at any depth
        /// under it (`set`, `entries(at:)`).
        var entriesUnder: [DiskPath: Int] = [:]
        var newest: [AssetRecord] = []
        var oldest: [AssetRecord] = []
        /// The listing's generation (`generation`): one more each time the listed records, or
        /// the placeholders of listed images, change.
        var generation = LibraryIndex.firstGeneration()
        /// The generation of the last change of the listed records themselves
        /// (`recordsGeneration`).
        var recordsGeneration = LibraryIndex.firstGeneration()
        /// The placeholders the listing at `generation` carries (docs/API.md, "Listing": a
        /// listing at a generation carries exactly the placeholders published at or before it):
        /// those loaded at open and those `publishArrivedPlaceholders` published since, each a
        /// hash (never an empty note) of a listed image. A placeholder kept in `thumbhashes`
        /// and not yet published is not here. Read with `generation`, under this one lock
        /// (`page`, `changes`), and looked up by `listedThumbhash`.
        var placeholders: [DiskPath: StoredThumbhash] = [:]
        /// What changed at each of the latest generations (`LibraryIndex+Changes`).
        var history = ListingHistory()
        var headerReads = 0
        var completedScans = 0
        /// What the last scan could not read (`ScanSummary`).
        var unreadableFiles: Set<DiskPath> = [], unreadableDirectories: Set<DiskPath> = []
        /// Files and directories already reported on stderr as unreadable: said once each,
        /// again only after they were read in between.
        var reported: Set<DiskPath> = []
        /// Symlinks to directories inside the root, as the walks met them: the link's path to
        /// its target's (both relative to the root). A change under a target is a change under
        /// each link to it too (`update`), as the walk lists the files under both.
        var linkedDirectories: [DiskPath: DiskPath] = [:]
        /// Where each file reached through a symlink really is: its path to its real path (both
        /// relative to the root), for those two alone that differ (`LibraryScope` judges the
        /// real one). Kept in memory, as the scans find them.
        var realPaths: [DiskPath: DiskPath] = [:]
        /// Whether `realPaths` holds every such file: false for records loaded from the database
        /// until the first whole scan (`scanNow`) has walked the tree.
        var knowsRealPaths = false
        /// Files decided under another list of formats (`Vips.formatsRevision`: the database
        /// was written by a thumbd with another list): each is read again at the next scan,
        /// whatever its size and mtime, and leaves this set once it has been read (or is gone);
        /// when it is empty, the database is stamped with the current revision. A file that
        /// cannot be read now stays, and is tried again at each scan, as any unreadable one.
        var decidedUnderOtherFormats: Set<DiskPath> = []
    }

    /// The library whose files this index lists.
    public let library: Library
    let probe: Probe
    /// How many threads read headers at once in a scan with many to read: one per core
    /// (header reads are CPU-bound: EXIF parsing, libvips' loaders).
    let headerReaders = max(1, ProcessInfo.processInfo.activeProcessorCount)
    let openDirectory: OpenDirectory
    let state = Mutex(State())
    /// The placeholders kept for listed images, published or not yet (`LibraryIndex+Thumbhash`;
    /// the listing carries those published: `State.placeholders`): their own lock, so a
    /// render storing one never waits on a listing or a scan.
    let thumbhashes = Mutex<[DiskPath: StoredThumbhash]>([:])
    /// The paths whose placeholders this node made, in the order made: what its peers pull
    /// (`LibraryIndex+PlaceholderFeed`).
    let placeholderFeed = Mutex<[DiskPath]>([])
    /// Tells this run's feed from another's (`placeholderFeedEpoch`): a random number of 16 hex digits.
    public let placeholderFeedEpoch = String(UInt64.random(in: 1...UInt64.max), radix: 16)
    let database: Mutex<SQLiteDatabase>
    /// Writes to the database that failed (`failedWrites`): the listing's, the placeholders'.
    let failedListingWrites = Atomic<Int>(0), failedPlaceholderWrites = Atomic<Int>(0)
    /// Whether writes to the database file are taken now (`LibraryIndex+WriteFault`).
    let writes: Mutex<IndexWrites>
    /// The clock `writes` is fed with: uptime ns.
    let uptime: @Sendable () -> UInt64
    let scanLock = Mutex(())
    /// Called after each change of `generation` (`onGenerationChange`), outside `state`'s lock.
    let generationObservers = Mutex<[@Sendable (Int) -> Void]>([])
    /// The paths whose placeholders arrived since the last publication, while one is scheduled;
    /// nil while none is (`placeholderArrived`).
    let arrivedPlaceholders = Mutex<[DiskPath]?>(nil)
    /// How that publication is scheduled.
    let schedulePublication: SchedulePublication
    /// Told of the images each scan lists anew (`onFreshImages`); nil: no one is.
    let freshImagesHandler = Mutex<(@Sendable ([AssetRecord]) -> Void)?>(nil)
    /// Whether the index is kept in its database file; false when that file is busy, damaged
    /// beyond removal, not thumbd's or cannot be written: the index then lives in memory for
    /// this run (a restart reads every header again).
    public let persisted: Bool
    /// Why the index is not kept in its database file (`persisted` false): SQLite's or thumbd's
    /// sentence, e.g. "database or disk is full" or "… is not SQLite's"; nil when it is kept.
    public let notPersistedBecause: String?
    /// Whether records from an earlier run were loaded at open.
    let loadedEarlierRecords: Bool
    let watchQueue = DispatchQueue(label: "thumbd.library-index", qos: .utility)

    /// Opens the index database at `databasePath` and loads what it holds (no scan yet).
    /// - Throws: `SQLiteDatabase.Failure` when the database cannot be opened or created.
    public convenience init(library: Library, databasePath: String,
                probe: @escaping Probe = LibraryIndex.probeHeader) throws {
        try self.init(library: library, databasePath: databasePath, probe: probe, openDirectory: { path in
            path.withCString { opendir($0) }
        })
    }

    /// `openDirectory`: how the walk opens a directory (tests make it fail).
    /// `uptime`: the clock a write fault is timed by (uptime ns; Dispatch's by default).
    /// `schedulePublication`: when the placeholders that arrive are published
    /// (`afterPublicationDelay` by default).
    init(library: Library, databasePath: String, probe: @escaping Probe,
         openDirectory: @escaping OpenDirectory,
         uptime: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
         schedulePublication: @escaping SchedulePublication = LibraryIndex.afterPublicationDelay) throws {
        self.library = library
        self.uptime = uptime
        self.schedulePublication = schedulePublication
        writes = Mutex(IndexWrites(path: databasePath))
        self.probe = probe
        self.openDirectory = openDirectory
        var db: SQLiteDatabase
        var loaded: State
        var loadedThumbhashes: [DiskPath: StoredThumbhash] = [:]
        do {
            db = try Self.openDatabase(databasePath)
            loaded = try Self.loadRecords(from: db)
            loadedThumbhashes = try Self.loadThumbhashes(from: db, for: loaded.records)
            if try Self.formatsRevision(of: db) != Vips.formatsRevision {
                loaded.decidedUnderOtherFormats = Set(loaded.records.keys).union(loaded.nonImages.keys)
                if loaded.decidedUnderOtherFormats.isEmpty { try Self.setFormatsRevision(of: db) }   // nothing to decide again
            }
            persisted = true
            notPersistedBecause = nil
        } catch {
            // The index is derived data: a damaged database of thumbd's is removed and rebuilt by
            // the next scan. One that is busy, another program's (not thumbd's schema), a link, or
            // not an SQLite file at all is left exactly as it is; then, as where no file can be
            // written (a read-only cache directory), the index lives in memory for this run.
            let damaged = (error as? SQLiteDatabase.Failure)?.isDamage == true
            if damaged, Self.isDatabaseFile(databasePath) {
                unlink(databasePath)
                for suffix in Self.sideFileSuffixes where Self.isDatabaseSideFile(databasePath + suffix) {
                    unlink(databasePath + suffix)
                }
            }
            if damaged, let fresh = try? Self.openDatabase(databasePath) {
                db = fresh
                persisted = true
                notPersistedBecause = nil
            } else {
                db = try Self.openDatabase(":memory:")
                persisted = false
                notPersistedBecause = String(describing: error)
            }
            loaded = State()
            loadedThumbhashes = [:]
        }
        Self.sort(&loaded)
        loaded.countAll()
        loaded.history = ListingHistory(base: loaded.generation)
        loaded.placeholders = loadedThumbhashes.filter { !$0.value.hash.isEmpty }
        loadedEarlierRecords = !loaded.records.isEmpty || !loaded.nonImages.isEmpty
        state.withLock { $0 = loaded }
        thumbhashes.withLock { $0 = loadedThumbhashes }
        database = Mutex(db)
    }

    /// The default probe: libvips reads the header only.
    public static func probeHeader(_ path: DiskPath) -> Result<SourceInfo, RenderError> {
        Result { () throws(RenderError) in try Renderer().probe(file: path) }
    }

    /// Total images and one page of the listing; an offset past the end gives no items.
    public func listing(order: ListingOrder, offset: Int, limit: Int) -> (total: Int, items: [AssetRecord]) {
        state.withLock { s in
            let all = order == .newest ? s.newest : s.oldest
            let start = min(max(0, offset), all.count)
            let end = min(all.count, start + max(0, limit))
            return (all.count, Array(all[start..<end]))
        }
    }

    /// The listing's generation (docs/API.md, "Listing"): a number that changes whenever what is
    /// listed changes (an image added, removed, renamed or replaced, or its header read again
    /// with another size or time, or its placeholder made: `publishArrivedPlaceholders`), and
    /// not otherwise; compare it for equality only. It starts at
    /// the time the index was opened, µs since the epoch, and counts up by one per change from
    /// there, so a restart never gives a number an earlier run gave a different listing.
    public var generation: Int { state.withLock { $0.generation } }

    /// The `generation` of the last change of the listed images themselves (an image added,
    /// removed, renamed or replaced), placeholders aside: what work over the listed files (the
    /// backfill, the adoption of peers' placeholders) waits for, so that the placeholders it
    /// makes do not start it again.
    public var recordsGeneration: Int { state.withLock { $0.recordsGeneration } }

    /// Where a run's generations start: µs since the epoch (about 1.8e15 in 2026, below 2^53, so
    /// a JSON client reads it exactly).
    static func firstGeneration() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }

    /// Headers read since this index was opened.
    /// Writes to `index.sqlite` that failed since start (SQLite said why: full disk, I/O error,
    /// busy): of the listing (`assets`; each a scan's or a change's records) and of placeholders
    /// (`thumbhashes`). The memory stays right; a restart reads those files, or makes those
    /// placeholders, again.
    public var failedWrites: (listing: Int, placeholders: Int) {
        (failedListingWrites.load(ordering: .relaxed), failedPlaceholderWrites.load(ordering: .relaxed))
    }

    public var headerReads: Int { state.withLock { $0.headerReads } }

    /// Files and directories the last scan could not read (kept as they were listed, tried
    /// again by the next scan; each said once on stderr).
    public var unreadable: (files: Int, directories: Int) {
        state.withLock { ($0.unreadableFiles.count, $0.unreadableDirectories.count) }
    }

    /// Files left out of the listing because their header, in a format the listing takes, does
    /// not decode here (a lossless JPEG, SOF3, with Debian 12's libjpeg-turbo 2.1; a header cut
    /// short): each said once a run on stderr, read again when it changes.
    public var undecodableFiles: Int { state.withLock { $0.undecodable.count } }

    /// Scans finished since this index was opened (the first one makes a fresh index complete).
    public var completedScans: Int { state.withLock { $0.completedScans } }

    /// Whether listings are whole: false for a fresh index until its first scan ends; an index
    /// loaded from an earlier run is whole at once (rescans then keep it current).
    public var isComplete: Bool { loadedEarlierRecords || completedScans > 0 }

    /// Has `handler` told, after each scan (a rescan or an update) and before `rescan` returns,
    /// of the images it listed anew: added, or read again with another size or mtime (their
    /// records as listed now, published: the listing, and `needsThumbhash`, see them). Called on
    /// the scanning thread, with the scan lock held: it must hand the work elsewhere and return.
    /// Replaces any handler given before.
    public func onFreshImages(_ handler: @escaping @Sendable ([AssetRecord]) -> Void) {
        freshImagesHandler.withLock { $0 = handler }
    }

    /// Brings the index up to date with the disk, reading only new or changed headers.
    @discardableResult
    public func rescan() -> ScanSummary {
        scanLock.withLock { _ in
            let summary = scanNow()
            state.withLock { $0.completedScans += 1 }
            return summary
        }
    }
}
