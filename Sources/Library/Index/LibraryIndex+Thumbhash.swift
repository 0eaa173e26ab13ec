import Dispatch
import Foundation
import Rendering

/// The placeholder of each listed image (docs/API.md, "Listing": `thumbhash`): a ThumbHash made
/// from the pixels of a render, kept with the source identity (size, mtime) it was made from, so
/// a replaced file never shows its old placeholder. Kept in memory (`thumbhashes`, its own lock)
/// and in the database's `thumbhashes` table; rows of a path that changed or went are dropped
/// with the scan that saw it (`persist`), and a restart loads the rest. A placeholder that
/// arrives for a listed image changes the listing (its `thumbhash`): those that arrive within
/// `placeholderPublicationNanoseconds` are published as one generation, which the change feed
/// answers as changed items, so an open page shows them (`publishArrivedPlaceholders`).
extension LibraryIndex {
    /// One asset's placeholder: the hash (5-25 bytes; empty, NULL in the table: its source
    /// cannot be rendered, so none is made until it changes) and the identity of the file it
    /// was made from.
    struct StoredThumbhash: Equatable {
        let identity: SourceIdentity
        let hash: [UInt8]
        /// `hash` in base64 (RFC 4648 §4), as the listing sends it: encoded once here, not for
        /// every listing (10,000 items a page).
        let base64: String

        init(identity: SourceIdentity, hash: [UInt8]) {
            self.identity = identity
            self.hash = hash
            base64 = Data(hash).base64EncodedString()
        }
    }

    /// The columns of the `thumbhashes` table, as `PRAGMA table_info` gives them.
    static let thumbhashColumns = [("path", "TEXT"), ("bytes", "INTEGER"), ("mtime_ns", "INTEGER"), ("thumbhash", "BLOB")]

    static let createThumbhashes = """
        CREATE TABLE IF NOT EXISTS thumbhashes (
            path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, thumbhash BLOB);
        """

    /// The rows of `thumbhashes` that still belong to a listed record of the same identity;
    /// the others (the file changed while the server was down) are deleted.
    static func loadThumbhashes(from db: SQLiteDatabase, for records: [DiskPath: AssetRecord]) throws -> [DiskPath: StoredThumbhash] {
        var loaded: [DiskPath: StoredThumbhash] = [:], stale: [DiskPath] = []
        let select = try db.prepare("SELECT path, bytes, mtime_ns, thumbhash FROM thumbhashes")
        select.bind([])
        while try select.step() {
            guard let bytes = select.bytes(0) else { continue }
            let path = DiskPath(bytes: bytes)
            let identity = SourceIdentity(size: Int(select.integer(1)), modifiedNanoseconds: select.integer(2))
            if let record = records[path], record.identity == identity {
                loaded[path] = StoredThumbhash(identity: identity, hash: select.bytes(3) ?? [])
            } else {
                stale.append(path)
            }
        }
        if !stale.isEmpty {
            try db.transaction {
                let delete = try db.prepare("DELETE FROM thumbhashes WHERE path = ?")
                for path in stale { try delete.run([column(path)]) }
            }
        }
        return loaded
    }

    /// The placeholder of `record` as listed now: nil until one is made, when its source
    /// cannot be rendered, or when it was made from another version of the file.
    public func thumbhash(of record: AssetRecord) -> [UInt8]? {
        thumbhashes(of: [record])[0]
    }

    /// `thumbhash(of:)` of each record, under one lock (a page of the listing).
    public func thumbhashes(of records: [AssetRecord]) -> [[UInt8]?] {
        placeholders(of: records).map { $0?.hash }
    }

    /// `thumbhash(of:)` of each record in base64, under one lock: what a page of the listing sends.
    public func base64Thumbhashes(of records: [AssetRecord]) -> [String?] {
        placeholders(of: records).map { $0?.base64 }
    }

    private func placeholders(of records: [AssetRecord]) -> [StoredThumbhash?] {
        thumbhashes.withLock { stored in
            records.map { record in
                guard let entry = stored[record.path], entry.identity == record.identity, !entry.hash.isEmpty else { return nil }
                return entry
            }
        }
    }

    /// Whether `path` is listed with identity `source` and has no placeholder made from it yet
    /// (nor a note that it cannot be rendered): whether a render of it should make one.
    public func needsThumbhash(_ path: DiskPath, source: SourceIdentity) -> Bool {
        guard state.withLock({ $0.records[path]?.identity }) == source else { return false }
        return thumbhashes.withLock { $0[path]?.identity != source }
    }

    /// Keeps `hash` as the placeholder of `path` made from the file of identity `source`, in
    /// memory and in the database; an empty `hash` notes that the file cannot be rendered (and
    /// takes away a placeholder its embedded preview gave). Does nothing when `path` is no
    /// longer listed with that identity (it changed meanwhile). A placeholder made here (not an
    /// empty note) joins the feed peers pull (`placeholderFeed`); one made or taken away is
    /// published (`placeholderArrived`).
    public func storeThumbhash(_ hash: [UInt8], for path: DiskPath, source: SourceIdentity) {
        guard state.withLock({ $0.records[path]?.identity }) == source else { return }
        let hadOne = thumbhashes.withLock { stored -> Bool in
            defer { stored[path] = StoredThumbhash(identity: source, hash: hash) }
            return stored[path].map { $0.identity == source && !$0.hash.isEmpty } ?? false
        }
        if !hash.isEmpty { placeholderFeed.withLock { $0.append(path) } }
        if !hash.isEmpty || hadOne { placeholderArrived(path) }
        write(hash, for: path, source: source)
    }

    /// How long the placeholders that arrive are gathered before they are published as one
    /// generation of the listing, ns: 50 ms. A first scan's previews arrive hundreds a second,
    /// and each generation wakes every waiting change-feed request; an open page still shows a
    /// placeholder within about a tenth of a second of its making.
    static let placeholderPublicationNanoseconds = 50_000_000

    /// The server's `SchedulePublication`: `placeholderPublicationNanoseconds` later, on a
    /// global queue.
    static let afterPublicationDelay: SchedulePublication = { publish in
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .nanoseconds(placeholderPublicationNanoseconds), execute: publish)
    }

    /// Notes that `path`'s placeholder arrived; the first arrival after a publication schedules
    /// the next (`schedulePublication`: `afterPublicationDelay` in a server).
    func placeholderArrived(_ path: DiskPath) {
        let schedule = arrivedPlaceholders.withLock { arrived -> Bool in
            guard arrived != nil else {
                arrived = [path]
                return true
            }
            arrived!.append(path)
            return false
        }
        guard schedule else { return }
        schedulePublication { [weak self] in self?.publishArrivedPlaceholders() }
    }

    /// Publishes the placeholders that arrived since the last publication: one generation whose
    /// change names those of them still listed (the change feed's changed items), told to the
    /// generation's observers; nothing when none is listed any more.
    func publishArrivedPlaceholders() {
        guard let arrived = arrivedPlaceholders.withLock({ arrived in defer { arrived = nil }; return arrived }) else { return }
        let moved = state.withLock { s -> Int? in
            var seen: Set<DiskPath> = []
            let listed = arrived.filter { s.records[$0] != nil && seen.insert($0).inserted }
            guard !listed.isEmpty else { return nil }
            s.generation += 1
            s.history.append(ListingChange(generation: s.generation, removed: [], inserted: [], placeholders: listed))
            return s.generation
        }
        if let moved { for observer in generationObservers.withLock({ $0 }) { observer(moved) } }
    }

    /// What became of another node's placeholder offered to this index (`adoptThumbhash`).
    public enum Adoption: Sendable, Equatable {
        /// Kept: listed here with that identity, and none made from it yet.
        case kept
        /// Not needed: one made from that identity is kept already (or a note that the file
        /// cannot be rendered), or the hash is empty.
        case notNeeded
        /// Not listed here yet, or listed at an older version (an earlier mtime): this node's
        /// scan has not seen the file the peer made it from; it may take it after its next scan.
        case notYetListed
        /// Listed here at another version that is not older (the peer's is stale): never kept.
        case stale
    }

    /// Keeps `hash`, another node's placeholder of `path` made from the file of identity
    /// `source`, when this index lists `path` with that identity and has none made from it:
    /// a file that differs here (another size or mtime) or a placeholder already kept leaves it
    /// out. Not fed to peers (each node feeds only what it made).
    @discardableResult
    public func adoptThumbhash(_ hash: [UInt8], for path: DiskPath, source: SourceIdentity) -> Adoption {
        guard !hash.isEmpty else { return .notNeeded }
        guard let listed = state.withLock({ $0.records[path]?.identity }) else { return .notYetListed }
        guard listed == source else {
            return listed.modifiedNanoseconds < source.modifiedNanoseconds ? .notYetListed : .stale
        }
        let kept = thumbhashes.withLock { stored -> Bool in
            guard stored[path]?.identity != source else { return false }
            stored[path] = StoredThumbhash(identity: source, hash: hash)
            return true
        }
        guard kept else { return .notNeeded }
        placeholderArrived(path)
        write(hash, for: path, source: source)
        return .kept
    }

    /// `hash` for `path` at `source` into the database's `thumbhashes` table.
    private func write(_ hash: [UInt8], for path: DiskPath, source: SourceIdentity) {
        let effects = database.withLock { db -> [IndexWrites.Effect] in
            // As `persist`: a failed write leaves the memory right (counted); the next run makes it again.
            do {
                try db.prepare("INSERT OR REPLACE INTO thumbhashes VALUES (?, ?, ?, ?)").run(
                    [Self.column(path), .integer(Int64(source.size)), .integer(source.modifiedNanoseconds), hash.isEmpty ? .null : .blob(hash)])
                return noteWrite(.written)
            } catch {
                failedPlaceholderWrites.add(1, ordering: .relaxed)
                return noteWrite(.failed(why: String(describing: error)))
            }
        }
        say(effects)
    }

    /// Forgets the placeholder of `path`, in memory and in the database (`ThumbhashStore`).
    public func forgetThumbhash(for path: DiskPath) {
        guard thumbhashes.withLock({ $0.removeValue(forKey: path) }) != nil else { return }
        let effects = database.withLock { db -> [IndexWrites.Effect] in
            do {
                try db.prepare("DELETE FROM thumbhashes WHERE path = ?").run([Self.column(path)])
                return noteWrite(.written)
            } catch {
                failedPlaceholderWrites.add(1, ordering: .relaxed)
                return noteWrite(.failed(why: String(describing: error)))
            }
        }
        say(effects)
    }

    /// Listed images with a placeholder, and those whose source cannot be rendered.
    public var thumbhashCounts: (known: Int, unrenderable: Int) {
        thumbhashes.withLock { stored in
            let unrenderable = stored.values.count { $0.hash.isEmpty }
            return (stored.count - unrenderable, unrenderable)
        }
    }

    /// Drops, in `db` (inside `persist`'s transaction) and in memory, the placeholders of paths
    /// gone and of paths read again with another identity or no longer an image.
    func dropThumbhashes(upserts: [(DiskPath, SourceIdentity, AssetRecord?)], removed: Set<DiskPath>, in db: SQLiteDatabase) throws {
        let stale = thumbhashes.withLock { stored -> [DiskPath] in
            var stale = removed.filter { stored[$0] != nil }
            for (path, identity, record) in upserts where stored[path] != nil && (record == nil || stored[path]?.identity != identity) {
                stale.insert(path)
            }
            for path in stale { stored[path] = nil }
            return Array(stale)
        }
        let delete = try db.prepare("DELETE FROM thumbhashes WHERE path = ?")
        for path in stale { try delete.run([Self.column(path)]) }
    }
}

extension AssetRecord {
    /// The size and modification time the record was read at.
    public var identity: SourceIdentity {
        SourceIdentity(size: bytes, modifiedNanoseconds: modifiedNanoseconds)
    }
}
