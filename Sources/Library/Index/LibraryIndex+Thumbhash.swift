import Dispatch
import Foundation
import Rendering

/// The placeholder of each listed image (docs/API.md, "Listing": `thumbhash`): a ThumbHash made
/// from the pixels of a render, kept with the source identity (size, mtime) it was made from, so
/// a replaced file never shows its old placeholder. Kept in memory (`thumbhashes`, its own lock)
/// and in the database's `thumbhashes` table; rows of a path that changed or went are dropped
/// with the scan that saw it (`persist`), and a restart loads the rest. A placeholder that
/// arrives for a listed image (made, adopted from a peer, or taken away: `noteUnrenderable`'s
/// empty note, `forgetThumbhash`) changes the listing (its `thumbhash`): those that arrive
/// within `placeholderPublicationNanoseconds` are published as one generation, which the change
/// feed answers as changed items, so an open page shows them (`publishArrivedPlaceholders`).
/// The listing carries a placeholder from that generation on, never before (`State.placeholders`,
/// `listedThumbhash`): a listing at a generation carries exactly what was published at or before it.
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

    /// The placeholder kept for `record`, published or not yet: nil until one is made, when its
    /// source cannot be rendered, or when it was made from another version of the file. The
    /// listing carries it once published (`ListingPage.thumbhashes`).
    public func thumbhash(of record: AssetRecord) -> [UInt8]? {
        thumbhashes.withLock { stored in
            stored[record.path].flatMap { $0.identity == record.identity && !$0.hash.isEmpty ? $0.hash : nil }
        }
    }

    /// The `thumbhash` a listing carries for `record` (base64, RFC 4648 §4), given the
    /// placeholders published at its generation (`State.placeholders`, read with it): one made
    /// from the file as listed, else nil. The one rule of what an item's `thumbhash` is, for
    /// `page` and `changes`.
    static func listedThumbhash(of record: AssetRecord, in published: [DiskPath: StoredThumbhash]) -> String? {
        guard let entry = published[record.path], entry.identity == record.identity else { return nil }
        return entry.base64
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
    /// empty note) joins the feed peers pull (`placeholderFeed`); what the listing shows of it
    /// changes at its publication (`placeholderArrived`).
    public func storeThumbhash(_ hash: [UInt8], for path: DiskPath, source: SourceIdentity) {
        guard state.withLock({ $0.records[path]?.identity }) == source else { return }
        thumbhashes.withLock { $0[path] = StoredThumbhash(identity: source, hash: hash) }
        if !hash.isEmpty { placeholderFeed.withLock { $0.append(path) } }
        placeholderArrived(path)
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

    /// Publishes the placeholders that arrived since the last publication: the listing's
    /// (`State.placeholders`) become those kept now for the paths that arrived, and when that
    /// changes the `thumbhash` of listed items (a placeholder made, replaced or taken away), it
    /// is one new generation whose change names them (the change feed's changed items), told to
    /// the generation's observers; nothing moves otherwise (an empty note where none was shown).
    /// Called `placeholderPublicationNanoseconds` after an arrival, and by tests that need what
    /// arrived listed now: the arrivals are taken and published under `state`'s lock, so when
    /// it returns every placeholder that arrived before the call is published, by it or by a
    /// publication under way elsewhere. Locks `state`, then within it `arrivedPlaceholders` and
    /// `thumbhashes` (nothing takes `state` while holding either).
    func publishArrivedPlaceholders() {
        let moved = state.withLock { s -> Int? in
            guard let arrived = arrivedPlaceholders.withLock({ arrived in defer { arrived = nil }; return arrived }) else { return nil }
            var seen: Set<DiskPath> = []
            let paths = arrived.filter { seen.insert($0).inserted }
            let kept = thumbhashes.withLock { stored in paths.map { stored[$0] } }
            var changed: [DiskPath] = []
            for (path, entry) in zip(paths, kept) {
                guard let record = s.records[path] else {
                    s.placeholders[path] = nil
                    continue
                }
                let shown = Self.listedThumbhash(of: record, in: s.placeholders)
                let published = entry.flatMap { $0.identity == record.identity && !$0.hash.isEmpty ? $0 : nil }
                if s.placeholders[path] != published { s.placeholders[path] = published }
                if Self.listedThumbhash(of: record, in: s.placeholders) != shown { changed.append(path) }
            }
            guard !changed.isEmpty else { return nil }
            s.generation += 1
            s.history.append(ListingChange(generation: s.generation, removed: [], inserted: [], placeholders: changed))
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

    /// Forgets the placeholder of `path`, in memory and in the database (`ThumbhashStore`): the
    /// listing drops it at its publication, a change the feed tells (`placeholderArrived`).
    public func forgetThumbhash(for path: DiskPath) {
        guard thumbhashes.withLock({ $0.removeValue(forKey: path) }) != nil else { return }
        placeholderArrived(path)
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

extension LibraryIndex.State {
    /// Drops the published placeholders of `paths` that their records as listed now no longer
    /// carry (the file gone, or read again with another identity): a scan's, at the generation
    /// it makes (the listing already leaves them out by `listedThumbhash`; this lets them go).
    mutating func dropPublishedPlaceholders(of paths: [DiskPath]) {
        for path in paths where placeholders[path] != nil && placeholders[path]?.identity != records[path]?.identity {
            placeholders[path] = nil
        }
    }
}

extension AssetRecord {
    /// The size and modification time the record was read at.
    public var identity: SourceIdentity {
        SourceIdentity(size: bytes, modifiedNanoseconds: modifiedNanoseconds)
    }
}
