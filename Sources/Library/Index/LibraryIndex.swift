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

    private struct State {
        /// Keyed by asset path as on disk, byte for byte: two names that differ only in Unicode
        /// form are two assets (a `String` key would merge them).
        var records: [DiskPath: AssetRecord] = [:]
        /// Files that are not images, remembered with their identity so they are not probed again.
        var nonImages: [DiskPath: SourceIdentity] = [:]
        var newest: [AssetRecord] = []
        var oldest: [AssetRecord] = []
        /// The listing's generation (`generation`): one more each time the listed records change.
        var generation = LibraryIndex.firstGeneration()
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
        /// Files decided under another list of formats (`Vips.formatsRevision`: the database
        /// was written by a thumbd with another list): each is read again at the next scan,
        /// whatever its size and mtime, and leaves this set once it has been read (or is gone);
        /// when it is empty, the database is stamped with the current revision. A file that
        /// cannot be read now stays, and is tried again at each scan, as any unreadable one.
        var decidedUnderOtherFormats: Set<DiskPath> = []
    }

    /// The library whose files this index lists.
    public let library: Library
    private let probe: Probe
    private let openDirectory: OpenDirectory
    private let state = Mutex(State())
    private let database: Mutex<SQLiteDatabase>
    private let scanLock = Mutex(())
    /// Whether the index is kept in its database file; false when that file is busy, damaged
    /// beyond removal, not thumbd's or cannot be written: the index then lives in memory for
    /// this run (a restart reads every header again).
    public let persisted: Bool
    /// Why the index is not kept in its database file (`persisted` false): SQLite's or thumbd's
    /// sentence, e.g. "database or disk is full" or "… is not SQLite's"; nil when it is kept.
    public let notPersistedBecause: String?
    /// Whether records from an earlier run were loaded at open.
    private let loadedEarlierRecords: Bool
    private let watchQueue = DispatchQueue(label: "thumbd.library-index", qos: .utility)

    /// Opens the index database at `databasePath` and loads what it holds (no scan yet).
    /// - Throws: `SQLiteDatabase.Failure` when the database cannot be opened or created.
    public convenience init(library: Library, databasePath: String,
                probe: @escaping Probe = LibraryIndex.probeHeader) throws {
        try self.init(library: library, databasePath: databasePath, probe: probe, openDirectory: { path in
            path.withCString { opendir($0) }
        })
    }

    /// `openDirectory`: how the walk opens a directory (tests make it fail).
    init(library: Library, databasePath: String, probe: @escaping Probe,
         openDirectory: @escaping OpenDirectory) throws {
        self.library = library
        self.probe = probe
        self.openDirectory = openDirectory
        var db: SQLiteDatabase
        var loaded: State
        do {
            db = try Self.openDatabase(databasePath)
            loaded = try Self.loadRecords(from: db)
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
        }
        Self.sort(&loaded)
        loadedEarlierRecords = !loaded.records.isEmpty || !loaded.nonImages.isEmpty
        state.withLock { $0 = loaded }
        database = Mutex(db)
    }

    /// Whether `path` is a regular file that is empty or starts with SQLite's header string
    /// ("SQLite format 3" and a NUL, <https://www.sqlite.org/fileformat.html> §1.3.1).
    public static func isDatabaseFile(_ path: String) -> Bool {
        FileHead.starts(path, with: Array("SQLite format 3\0".utf8))
    }

    /// The files SQLite keeps beside a database (<https://www.sqlite.org/tempfiles.html>).
    static let sideFileSuffixes = ["-wal", "-shm", "-journal"]

    /// Whether `path`, named as one of SQLite's side files (`-wal`, `-shm`, `-journal`), is
    /// absent, or a regular file that is empty or starts as SQLite writes that kind: a WAL
    /// header's magic 0x377f0682 or 0x377f0683 (fileformat.html §4.1), a wal-index's version
    /// 3007000 (walformat.html §2.1, native order: little-endian here), a rollback journal's
    /// 8-byte magic (fileformat.html, "The Rollback Journal"). A file of the user's at such a name is none of
    /// these: SQLite would overwrite or delete it, so the database beside it is not opened.
    public static func isDatabaseSideFile(_ path: String) -> Bool {
        var st = stat()
        if lstat(path, &st) != 0 { return errno == ENOENT }
        if path.hasSuffix("-wal") {
            return FileHead.starts(path, with: [0x37, 0x7F, 0x06, 0x82]) || FileHead.starts(path, with: [0x37, 0x7F, 0x06, 0x83])
        }
        if path.hasSuffix("-shm") { return FileHead.starts(path, with: [0x18, 0xE2, 0x2D, 0x00]) }
        if path.hasSuffix("-journal") { return FileHead.starts(path, with: [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7]) }
        return false
    }

    /// The columns of thumbd's `assets` table, as `PRAGMA table_info` gives them (name, type).
    private static let columns = [("path", "TEXT"), ("bytes", "INTEGER"), ("mtime_ns", "INTEGER"),
                                  ("is_image", "INTEGER"), ("width", "INTEGER"), ("height", "INTEGER"),
                                  ("taken_ms", "INTEGER"), ("taken_offset_min", "INTEGER")]

    /// Opens the database, checks it holds thumbd's table and nothing else (before anything is
    /// written to it), then sets it up.
    /// - Throws: `SQLiteDatabase.Failure`: `isDamage` for a file that is not a database; an
    ///   error without it for another program's database, which is not touched.
    private static func openDatabase(_ path: String) throws -> SQLiteDatabase {
        if path != ":memory:", let foreign = sideFileSuffixes.first(where: { !isDatabaseSideFile(path + $0) }) {
            throw SQLiteDatabase.Failure(description: "\(path)\(foreign) is not SQLite's, and opening the database would overwrite it")
        }
        let db = try SQLiteDatabase(path: path)
        let objects = try db.prepare("SELECT type, name FROM sqlite_master")
        objects.bind([])
        while try objects.step() {
            let type = objects.text(0) ?? "", name = objects.text(1) ?? ""
            guard (type == "table" && name == "assets") || (type == "index" && name.hasPrefix("sqlite_autoindex_assets")) else {
                throw SQLiteDatabase.Failure(description: "\(path) holds \(type) \(name), which is not thumbd's")
            }
        }
        let info = try db.prepare("PRAGMA table_info(assets)")
        info.bind([])
        var found: [(String, String)] = []
        while try info.step() { found.append((info.text(1) ?? "", info.text(2) ?? "")) }
        guard found.isEmpty || found.elementsEqual(columns, by: ==) else {
            throw SQLiteDatabase.Failure(description: "\(path) has a table assets that is not thumbd's")
        }
        try db.execute("""
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=NORMAL;
            CREATE TABLE IF NOT EXISTS assets (
                path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, is_image INTEGER NOT NULL,
                width INTEGER, height INTEGER, taken_ms INTEGER, taken_offset_min INTEGER);
            """)
        let check = try db.prepare("SELECT count(*) FROM assets")
        check.bind([])
        _ = try check.step()
        return db
    }

    /// The `Vips.formatsRevision` the records of `db` were decided under, kept in SQLite's
    /// `user_version` header field (<https://www.sqlite.org/pragma.html#pragma_user_version>),
    /// so thumbd's file holds no other table; 0 in a database from before the revision existed.
    private static func formatsRevision(of db: SQLiteDatabase) throws -> Int {
        let version = try db.prepare("PRAGMA user_version")
        version.bind([])
        return try version.step() ? Int(version.integer(0)) : 0
    }

    /// Stamps `db` with the current `Vips.formatsRevision`.
    private static func setFormatsRevision(of db: SQLiteDatabase) throws {
        try db.execute("PRAGMA user_version = \(Vips.formatsRevision)")
    }

    private static func loadRecords(from db: SQLiteDatabase) throws -> State {
        var loaded = State()
        let select = try db.prepare("SELECT path, bytes, mtime_ns, is_image, width, height, taken_ms, taken_offset_min FROM assets")
        select.bind([])
        while try select.step() {
            // A UTF-8 path is stored as text, any other as a blob (`persist`).
            guard let bytes = select.bytes(0) else { continue }
            let path = DiskPath(bytes: bytes)
            let identity = SourceIdentity(size: Int(select.integer(1)), modifiedNanoseconds: select.integer(2))
            if select.integer(3) == 0 {
                loaded.nonImages[path] = identity
            } else {
                loaded.records[path] = AssetRecord(
                    path: path, bytes: identity.size, modifiedNanoseconds: identity.modifiedNanoseconds,
                    width: Int(select.integer(4)), height: Int(select.integer(5)),
                    taken: CaptureDate(epochMilliseconds: select.integer(6), offsetMinutes: Int(select.integer(7))))
            }
        }
        return loaded
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

    /// The listing in `order` and its generation, read together (the array is shared, not copied).
    func snapshot(_ order: ListingOrder) -> (generation: Int, all: [AssetRecord]) {
        state.withLock { s in (s.generation, order == .newest ? s.newest : s.oldest) }
    }

    /// The listing's generation (docs/API.md, "Listing"): a number that changes whenever what is
    /// listed changes (an image added, removed, renamed or replaced, or its header read again
    /// with another size or time), and not otherwise; compare it for equality only. It starts at
    /// the time the index was opened, µs since the epoch, and counts up by one per change from
    /// there, so a restart never gives a number an earlier run gave a different listing.
    public var generation: Int { state.withLock { $0.generation } }

    /// Where a run's generations start: µs since the epoch (about 1.8e15 in 2026, below 2^53, so
    /// a JSON client reads it exactly).
    static func firstGeneration() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
    }

    /// Headers read since this index was opened.
    public var headerReads: Int { state.withLock { $0.headerReads } }

    /// Files and directories the last scan could not read (kept as they were listed, tried
    /// again by the next scan; each said once on stderr).
    public var unreadable: (files: Int, directories: Int) {
        state.withLock { ($0.unreadableFiles.count, $0.unreadableDirectories.count) }
    }

    /// Scans finished since this index was opened (the first one makes a fresh index complete).
    public var completedScans: Int { state.withLock { $0.completedScans } }

    /// Whether listings are whole: false for a fresh index until its first scan ends; an index
    /// loaded from an earlier run is whole at once (rescans then keep it current).
    public var isComplete: Bool { loadedEarlierRecords || completedScans > 0 }

    /// Brings the index up to date with the disk, reading only new or changed headers.
    @discardableResult
    public func rescan() -> ScanSummary {
        scanLock.withLock { _ in
            let summary = scanNow()
            state.withLock { $0.completedScans += 1 }
            return summary
        }
    }

    /// Brings the records at and under `paths` (relative to the root, as on disk) up to date,
    /// as `rescan` does for the whole tree: a file is read again when its size or mtime
    /// changed, a directory's subtree is walked, and what is gone (a file, a directory with all
    /// under it) is dropped. For the changes the library watch reports
    /// (`LibraryWatch.takeChanges`); the empty path is the whole tree. A path with a dot-file
    /// on the way is ignored (nothing under it is listed).
    @discardableResult
    public func update(_ paths: [DiskPath]) -> ScanSummary {
        let links = state.withLock { $0.linkedDirectories }
        let scopes = Self.outermost(Self.withAliases(paths, links: links))
        guard !scopes.isEmpty else { return ScanSummary() }
        return scanLock.withLock { _ in scanNow(scopes: scopes) }
    }

    /// `paths` and, for each under the target of a symlinked directory, the same path under
    /// the link (links within links followed, a few deep).
    static func withAliases(_ paths: [DiskPath], links: [DiskPath: DiskPath]) -> [DiskPath] {
        guard !links.isEmpty else { return paths }
        var all = Set(paths)
        var round = paths
        for _ in 0..<4 {
            var next: [DiskPath] = []
            for path in round {
                for (link, target) in links where path == target || path.isInside(target) {
                    let alias = DiskPath(bytes: link.bytes + path.bytes.dropFirst(target.bytes.count))
                    if all.insert(alias).inserted { next.append(alias) }
                }
            }
            if next.isEmpty { break }
            round = next
        }
        return Array(all)
    }

    /// `paths` without those inside another of them.
    static func outermost(_ paths: [DiskPath]) -> Set<DiskPath> {
        let all = Set(paths)
        if all.contains(DiskPath(bytes: [])) { return [DiskPath(bytes: [])] }
        let bytes = Set(all.map(\.bytes))   // once: a set per path made this quadratic (a cp -r of 10,000)
        return all.filter { !Self.hasAncestor($0, in: bytes) }
    }

    /// Whether a directory on the way to `path` (a proper prefix ending at a `/`) is in `set`
    /// (paths' bytes): a lookup per `/`, no allocation.
    static func hasAncestor(_ path: DiskPath, in set: Set<ArraySlice<UInt8>>) -> Bool {
        let bytes = path.bytes
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "/"), set.contains(bytes[bytes.startIndex..<i]) { return true }
            i += 1
        }
        return false
    }

    /// Keeps the index current from `feed` (the library watch): rescans now on a background
    /// queue; then updates the paths the feed reports (`update`), `settleSeconds` after it
    /// says something changed so that a burst (a `cp -r`) is read in few updates, or rescans the
    /// whole tree when the feed lost track; rescans the whole tree every `pollSeconds` while
    /// the feed does not see everything, and every `sweepSeconds` regardless (for what no
    /// watch sees: see `LibraryWatch`). Stops when the index is released.
    /// - Parameters:
    ///   - pollSeconds: the rescan interval while the feed is blind (`index_rescan_seconds`).
    ///   - sweepSeconds: the safety sweep's interval (`index_sweep_seconds`); 0: none.
    ///   - settleSeconds: how long changes are gathered before an update (default 50 ms).
    public func follow(_ feed: LibraryChangeFeed, pollSeconds: Double, sweepSeconds: Double,
                       settleSeconds: Double = 0.05) {
        let pending = Mutex(false)
        feed.onChanges { [weak self] in
            guard let self, pending.withLock({ was in defer { was = true }; return !was }) else { return }
            watchQueue.asyncAfter(deadline: .now() + settleSeconds) { [weak self] in
                pending.withLock { $0 = false }
                guard let self else { return }
                if let paths = feed.takeChanges() { update(paths) } else { rescan() }
            }
        }
        watchQueue.async { [weak self] in
            guard let self else { return }
            _ = feed.takeChanges()   // what happened before: this scan covers it
            rescan()
            tick(feed, pollSeconds: pollSeconds, sweepSeconds: sweepSeconds, lastSweep: DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// One round of `follow`'s timer: a rescan when the feed is blind or the sweep is due.
    private func tick(_ feed: LibraryChangeFeed, pollSeconds: Double, sweepSeconds: Double, lastSweep: UInt64) {
        let period = max(0.05, pollSeconds)
        watchQueue.asyncAfter(deadline: .now() + period) { [weak self] in
            guard let self else { return }
            var lastSweep = lastSweep
            let now = DispatchTime.now().uptimeNanoseconds
            let sweepDue = sweepSeconds > 0 && Double(now &- lastSweep) / 1e9 >= sweepSeconds
            if !feed.seesEverything || sweepDue {
                _ = feed.takeChanges()
                rescan()
                if sweepDue { lastSweep = now }
            }
            tick(feed, pollSeconds: pollSeconds, sweepSeconds: sweepSeconds, lastSweep: lastSweep)
        }
    }

    /// Rescans now on a background queue, then every `interval` seconds (default 2 s).
    /// Watching stops when the index is released (the timer holds it weakly).
    public func startWatching(interval: Double = 2) {
        watchQueue.async { [weak self] in
            guard let self else { return }
            rescan()
            watchQueue.asyncAfter(deadline: .now() + interval) { [weak self] in self?.startWatching(interval: interval) }
        }
    }

    /// One scan: of the whole tree, or (`scopes`, none inside another) of those paths only.
    private func scanNow(scopes: Set<DiskPath>? = nil) -> ScanSummary {
        var onDisk: [DiskPath: (identity: SourceIdentity, absolute: DiskPath)] = [:]
        var unlisted: [(relative: DiskPath, error: Int32)] = []
        let ancestors = DirectoryIdentity(of: library.rootPath).map { [$0] } ?? []
        let scopes = scopes.flatMap { $0.contains(DiskPath(bytes: [])) ? nil : $0 }
        var links: [DiskPath: DiskPath] = [:]
        if let scopes {
            for scope in scopes {
                collect(scope, rootAncestors: ancestors, into: &onDisk, unlisted: &unlisted, links: &links)
            }
        } else {
            walk(library.rootPath, relative: [], ancestors: ancestors, into: &onDisk, unlisted: &unlisted, links: &links)
        }
        state.withLock { s in
            if scopes == nil { s.linkedDirectories = links } else { s.linkedDirectories.merge(links) { $1 } }
        }
        let scopeBytes = Set((scopes ?? []).map(\.bytes))
        let inScope: (DiskPath) -> Bool = { path in
            scopes == nil || scopeBytes.contains(path.bytes) || Self.hasAncestor(path, in: scopeBytes)
        }
        var (records, nonImages, redecide) = state.withLock { ($0.records, $0.nonImages, $0.decidedUnderOtherFormats) }
        if scopes != nil {
            records = records.filter { inScope($0.key) }
            nonImages = nonImages.filter { inScope($0.key) }
        }
        var summary = ScanSummary()
        summary.unreadableDirectories = unlisted.count
        var upserts: [(DiskPath, SourceIdentity, AssetRecord?)] = []
        var unreadable: [(path: DiskPath, why: String)] = []
        var readable: [DiskPath] = []
        for (path, file) in onDisk {
            let known = records[path].map { SourceIdentity(size: $0.bytes, modifiedNanoseconds: $0.modifiedNanoseconds) }
                ?? nonImages[path]
            if known == file.identity && !redecide.contains(path) { continue }
            summary.headerReads += 1
            let record: AssetRecord?
            switch probe(file.absolute) {
            case .success(let info):
                let taken = info.dateTimeOriginal.flatMap { CaptureDate(exifDateTime: $0, offset: info.offsetTimeOriginal) }
                    ?? CaptureDate(epochMilliseconds: file.identity.modifiedNanoseconds / 1_000_000)
                record = AssetRecord(path: path, bytes: file.identity.size, modifiedNanoseconds: file.identity.modifiedNanoseconds,
                                     width: info.displayWidth, height: info.displayHeight, taken: taken)
                readable.append(path)
            case .failure(let error) where error.kind == .unsupportedSource:
                record = nil   // read, and not an image: remembered until the file changes
                readable.append(path)
            case .failure(let error):
                // Not read (permissions, I/O, descriptors, gone meanwhile): nothing is decided
                // about it; what is listed stays, and the next scan tries again.
                if error.kind != .sourceNotFound {
                    summary.unreadableFiles += 1
                    unreadable.append((path, error.message))
                }
                continue
            }
            if known == nil, record != nil { summary.added += 1 } else if record != nil || records[path] != nil { summary.changed += 1 }
            upserts.append((path, file.identity, record))
        }
        // What lies under a directory that could not be listed now is not known to be gone.
        let removed = Set(records.keys).union(nonImages.keys).subtracting(onDisk.keys).filter { path in
            !unlisted.contains { $0.relative.bytes.isEmpty || path.isInside($0.relative) }
        }
        summary.removed = removed.filter { records[$0] != nil }.count
        report(unreadable.map { ($0.path, $0.why) } + unlisted.map { ($0.relative, "cannot be listed: " + String(cString: strerror($0.error))) },
               readable: readable, files: unreadable.map(\.path), directories: unlisted.map(\.relative), inScope: inScope)
        // Once every file decided under another list was read again (or is gone), the database
        // says it holds the current list's decisions.
        let formatsSettled = !redecide.isEmpty && redecide.subtracting(readable).subtracting(removed).isEmpty
        if !redecide.isEmpty {
            state.withLock { $0.decidedUnderOtherFormats.subtract(Set(readable).union(removed)) }
        }
        guard !upserts.isEmpty || !removed.isEmpty || formatsSettled else { return summary }
        persist(upserts: upserts, removed: removed, formatsSettled: formatsSettled)
        state.withLock { s in
            var listingChanged = false
            for (path, identity, record) in upserts {
                if s.records[path] != record { listingChanged = true }
                s.records[path] = record
                s.nonImages[path] = record == nil ? identity : nil
            }
            for path in removed {
                if s.records[path] != nil { listingChanged = true }
                s.records[path] = nil
                s.nonImages[path] = nil
            }
            if listingChanged { s.generation += 1 }
            s.headerReads += summary.headerReads
            Self.reorder(&s, changed: Set(upserts.map(\.0)).union(removed))
        }
        return summary
    }

    /// Records what the scan could not read (`files`, `directories`), and says each new one once
    /// on stderr (paths relative to the root); forgets those read this time. What was unreadable
    /// within the scan's reach (`inScope`: all of it for a whole rescan, the paths an update
    /// looked at) is replaced by what this scan found; the rest stands.
    private func report(_ failures: [(path: DiskPath, why: String)], readable: [DiskPath],
                        files: [DiskPath], directories: [DiskPath], inScope: (DiskPath) -> Bool) {
        let fresh = state.withLock { s -> [(path: DiskPath, why: String)] in
            s.unreadableFiles = s.unreadableFiles.filter { !inScope($0) }.union(files)
            s.unreadableDirectories = s.unreadableDirectories.filter { !inScope($0) }.union(directories)
            for path in readable { s.reported.remove(path) }
            return failures.filter { s.reported.insert($0.path).inserted }
        }
        for failure in fresh {
            let name = failure.path.bytes.isEmpty ? "the library root" : "'\(failure.path)'"
            FileHandle.standardError.write(Data(("thumbd: library: \(name) could not be read (\(failure.why)); "
                + "it is tried again at each scan, and what was listed stays listed\n").utf8))
        }
    }

    /// Writes what a scan found; `formatsSettled`: and stamps the current formats revision.
    private func persist(upserts: [(DiskPath, SourceIdentity, AssetRecord?)], removed: Set<DiskPath>, formatsSettled: Bool) {
        database.withLock { db in
            do {
                try db.transaction {
                    if formatsSettled { try Self.setFormatsRevision(of: db) }
                    let upsert = try db.prepare("INSERT OR REPLACE INTO assets VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                    for (path, identity, record) in upserts {
                        try upsert.run([Self.column(path), .integer(Int64(identity.size)), .integer(identity.modifiedNanoseconds),
                                        .integer(record == nil ? 0 : 1),
                                        record.map { .integer(Int64($0.width)) } ?? .null,
                                        record.map { .integer(Int64($0.height)) } ?? .null,
                                        record.map { .integer($0.taken.epochMilliseconds) } ?? .null,
                                        record.map { .integer(Int64($0.taken.offsetMinutes)) } ?? .null])
                    }
                    let delete = try db.prepare("DELETE FROM assets WHERE path = ?")
                    for path in removed { try delete.run([Self.column(path)]) }
                }
            } catch {
                // The in-memory index stays right; the next start re-reads what was not saved.
            }
        }
    }

    /// A path as stored in the `path` column: text when it is UTF-8 (as every path was before
    /// names that are not UTF-8 were listed), else a blob of its bytes.
    private static func column(_ path: DiskPath) -> SQLiteDatabase.Value {
        path.string.map { .text($0) } ?? .blob(Array(path.bytes))
    }

    /// Collects what `Library` serves, each under its name as on disk, byte for byte (not
    /// normalised, perhaps not UTF-8): regular files, skipping dot-files (`Library.isServableName`),
    /// and what a symlink leads to by `Library.target(of:)`, a file or a directory inside the
    /// root, as a URL through the link reaches it. A directory that is already on the way down
    /// (`ancestors`: device and inode; a link to `.` or `..`) is not walked again, so a loop of
    /// links ends. A directory that is there but cannot be listed (any failure but ENOENT or
    /// ENOTDIR: it went meanwhile) goes to `unlisted`, with its path relative to the root.
    private func walk(_ directory: DiskPath, relative: [UInt8], ancestors: [DirectoryIdentity],
                      into files: inout [DiskPath: (identity: SourceIdentity, absolute: DiskPath)],
                      unlisted: inout [(relative: DiskPath, error: Int32)],
                      links: inout [DiskPath: DiskPath]) {
        guard let dir = openDirectory(directory) else {
            if errno != ENOENT && errno != ENOTDIR { unlisted.append((DiskPath(bytes: relative), errno)) }
            return
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = Library.direntName(entry)
            guard Library.isServableName(name) else { continue }
            let absolute = directory.appending(name)
            let path = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
            guard let st = status(of: absolute, at: path, links: &links) else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let identity = DirectoryIdentity(st)
                guard !ancestors.contains(identity) else { continue }
                walk(absolute, relative: path, ancestors: ancestors + [identity], into: &files, unlisted: &unlisted, links: &links)
            case S_IFREG:
                files[DiskPath(bytes: path)] = (SourceIdentity(st), absolute)
            default:
                continue
            }
        }
    }

    /// Collects what lies at `scope` (relative to the root) as `walk` would from the root: the
    /// file, or the directory's subtree, reached through the same symlink rules; nothing when a
    /// name on the way is a dot-file, or the way is gone or leaves the root.
    private func collect(_ scope: DiskPath, rootAncestors: [DirectoryIdentity],
                         into files: inout [DiskPath: (identity: SourceIdentity, absolute: DiskPath)],
                         unlisted: inout [(relative: DiskPath, error: Int32)],
                         links: inout [DiskPath: DiskPath]) {
        let names = scope.segments.map { Array($0) }
        guard !names.isEmpty, names.allSatisfy(Library.isServableName) else { return }
        var ancestors = rootAncestors
        var absolute = library.rootPath
        var relative: [UInt8] = []
        for (i, name) in names.enumerated() {
            absolute = absolute.appending(name)
            relative += (relative.isEmpty ? [] : [UInt8(ascii: "/")]) + name
            guard let st = status(of: absolute, at: relative, links: &links) else { return }
            let last = i == names.count - 1
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                let identity = DirectoryIdentity(st)
                guard !ancestors.contains(identity) else { return }
                ancestors.append(identity)
                if last { walk(absolute, relative: relative, ancestors: ancestors, into: &files, unlisted: &unlisted, links: &links) }
            case S_IFREG where last:
                files[DiskPath(bytes: relative)] = (SourceIdentity(st), absolute)
            default:
                return
            }
        }
    }

    /// Brings the sorted listings in line with `records` after the records at `changed` were
    /// set or removed: merged in, in one pass over each listing, when they are few against it
    /// (an update from the watch, a rescan that found little), sorted anew otherwise.
    private static func reorder(_ s: inout State, changed: Set<DiskPath>) {
        guard changed.count * 8 < s.newest.count else { return sort(&s) }
        let fresh = changed.compactMap { s.records[$0] }
        s.newest = merge(s.newest.filter { !changed.contains($0.path) }, fresh.sorted(by: AssetRecord.newestFirst),
                         by: AssetRecord.newestFirst)
        s.oldest = merge(s.oldest.filter { !changed.contains($0.path) }, fresh.sorted(by: AssetRecord.oldestFirst),
                         by: AssetRecord.oldestFirst)
    }

    /// Two lists sorted by `before`, merged into one (stable: `a`'s first on ties).
    static func merge(_ a: [AssetRecord], _ b: [AssetRecord], by before: (AssetRecord, AssetRecord) -> Bool) -> [AssetRecord] {
        var merged: [AssetRecord] = []
        merged.reserveCapacity(a.count + b.count)
        var i = a.startIndex, j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            if before(b[j], a[i]) { merged.append(b[j]); j += 1 } else { merged.append(a[i]); i += 1 }
        }
        merged.append(contentsOf: a[i...])
        merged.append(contentsOf: b[j...])
        return merged
    }

    /// What the walks see at `absolute` (`relative` to the root): its `lstat`, or through a
    /// symlink what `Library.target(of:)` finds inside the root, a file or a directory (the link
    /// to a directory noted in `links`); nil when nothing is there or it is not to be listed
    /// (outside, a dot-file, a FIFO...).
    private func status(of absolute: DiskPath, at relative: [UInt8], links: inout [DiskPath: DiskPath]) -> stat? {
        var st = stat()
        guard absolute.withCString({ lstat($0, &st) }) == 0 else { return nil }
        guard (st.st_mode & S_IFMT) == S_IFLNK else { return st }
        switch library.target(of: absolute) {
        case .file(_, let target): return target
        case .directory(let real, let target):
            links[DiskPath(bytes: relative)] = DiskPath(bytes: real.bytes.dropFirst(library.rootPath.bytes.count + 1))
            return target
        case .other, .outside, .missing, .hidden: return nil
        }
    }

    private static func sort(_ s: inout State) {
        let all = Array(s.records.values)
        s.newest = all.sorted(by: AssetRecord.newestFirst)
        s.oldest = all.sorted(by: AssetRecord.oldestFirst)
    }
}
