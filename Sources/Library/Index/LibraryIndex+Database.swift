import Dispatch
import Foundation
import Rendering
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The index's SQLite file: what counts as thumbd's (the database and its side files), opening
/// and checking it, loading the records, and writing what a scan found.
extension LibraryIndex {
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
    static let columns = [("path", "TEXT"), ("bytes", "INTEGER"), ("mtime_ns", "INTEGER"),
                                  ("is_image", "INTEGER"), ("width", "INTEGER"), ("height", "INTEGER"),
                                  ("taken_ms", "INTEGER"), ("taken_offset_min", "INTEGER")] + addedColumns

    /// Columns added to the table since its first version, in order, each with the
    /// `ALTER TABLE` that adds it to a database written before it: a table that ends where one
    /// of them starts is thumbd's, brought up to date at open. `duration_ms`: a video's
    /// duration, NULL for a photo (with formats revision 3, which reads videos).
    static let addedColumns = [("duration_ms", "INTEGER")]

    /// Opens the database, checks it holds thumbd's table and nothing else (before anything is
    /// written to it), then sets it up.
    /// - Throws: `SQLiteDatabase.Failure`: `isDamage` for a file that is not a database; an
    ///   error without it for another program's database, which is not touched.
    static func openDatabase(_ path: String) throws -> SQLiteDatabase {
        if path != ":memory:", let foreign = sideFileSuffixes.first(where: { !isDatabaseSideFile(path + $0) }) {
            throw SQLiteDatabase.Failure(description: "\(path)\(foreign) is not SQLite's, and opening the database would overwrite it")
        }
        let db = try SQLiteDatabase(path: path)
        let objects = try db.prepare("SELECT type, name FROM sqlite_master")
        objects.bind([])
        while try objects.step() {
            let type = objects.text(0) ?? "", name = objects.text(1) ?? ""
            guard (type == "table" && ["assets", "thumbhashes"].contains(name))
                    || (type == "index" && (name.hasPrefix("sqlite_autoindex_assets") || name.hasPrefix("sqlite_autoindex_thumbhashes"))) else {
                throw SQLiteDatabase.Failure(description: "\(path) holds \(type) \(name), which is not thumbd's")
            }
        }
        for (table, expected) in [("assets", columns), ("thumbhashes", thumbhashColumns)] {
            let info = try db.prepare("PRAGMA table_info(\(table))")
            info.bind([])
            var found: [(String, String)] = []
            while try info.step() { found.append((info.text(1) ?? "", info.text(2) ?? "")) }
            // An assets table written before some of `addedColumns` ends where the first missing one starts.
            let added = table == "assets" ? addedColumns.count : 0
            let missing = (0...added).first { found.elementsEqual(expected.dropLast($0), by: ==) }
            guard found.isEmpty || missing != nil else {
                throw SQLiteDatabase.Failure(description: "\(path) has a table \(table) that is not thumbd's")
            }
            if !found.isEmpty, let missing, missing > 0 {
                for (name, type) in addedColumns.suffix(missing) { try db.execute("ALTER TABLE assets ADD COLUMN \(name) \(type)") }
            }
        }
        try db.execute("""
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=NORMAL;
            CREATE TABLE IF NOT EXISTS assets (
                path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, is_image INTEGER NOT NULL,
                width INTEGER, height INTEGER, taken_ms INTEGER, taken_offset_min INTEGER, duration_ms INTEGER);
            """ + createThumbhashes)
        let check = try db.prepare("SELECT count(*) FROM assets")
        check.bind([])
        _ = try check.step()
        return db
    }

    /// The `Vips.formatsRevision` the records of `db` were decided under, kept in SQLite's
    /// `user_version` header field (<https://www.sqlite.org/pragma.html#pragma_user_version>),
    /// so thumbd's file holds no other table; 0 in a database from before the revision existed.
    static func formatsRevision(of db: SQLiteDatabase) throws -> Int {
        let version = try db.prepare("PRAGMA user_version")
        version.bind([])
        return try version.step() ? Int(version.integer(0)) : 0
    }

    /// Stamps `db` with the current `Vips.formatsRevision`.
    static func setFormatsRevision(of db: SQLiteDatabase) throws {
        try db.execute("PRAGMA user_version = \(Vips.formatsRevision)")
    }

    static func loadRecords(from db: SQLiteDatabase) throws -> State {
        var loaded = State()
        let select = try db.prepare("SELECT path, bytes, mtime_ns, is_image, width, height, taken_ms, taken_offset_min, duration_ms FROM assets")
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
                    taken: CaptureDate(epochMilliseconds: select.integer(6), offsetMinutes: Int(select.integer(7))),
                    durationMilliseconds: select.isNull(8) ? nil : Int(select.integer(8)))
            }
        }
        return loaded
    }

    /// Writes what a scan found; `formatsSettled`: and stamps the current formats revision.
    func persist(upserts: [(DiskPath, SourceIdentity, AssetRecord?)], removed: Set<DiskPath>, formatsSettled: Bool) {
        let effects = database.withLock { db -> [IndexWrites.Effect] in
            do {
                try db.transaction {
                    if formatsSettled { try Self.setFormatsRevision(of: db) }
                    let upsert = try db.prepare("INSERT OR REPLACE INTO assets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    for (path, identity, record) in upserts {
                        try upsert.run([Self.column(path), .integer(Int64(identity.size)), .integer(identity.modifiedNanoseconds),
                                        .integer(record == nil ? 0 : 1),
                                        record.map { .integer(Int64($0.width)) } ?? .null,
                                        record.map { .integer(Int64($0.height)) } ?? .null,
                                        record.map { .integer($0.taken.epochMilliseconds) } ?? .null,
                                        record.map { .integer(Int64($0.taken.offsetMinutes)) } ?? .null,
                                        record?.durationMilliseconds.map { .integer(Int64($0)) } ?? .null])
                    }
                    let delete = try db.prepare("DELETE FROM assets WHERE path = ?")
                    for path in removed { try delete.run([Self.column(path)]) }
                    try dropThumbhashes(upserts: upserts, removed: removed, in: db)
                }
                return noteWrite(.written)
            } catch {
                // The in-memory index stays right; the next start re-reads what was not saved.
                failedListingWrites.add(1, ordering: .relaxed)
                return noteWrite(.failed(why: String(describing: error)))
            }
        }
        say(effects)
    }

    /// A path as stored in the `path` column: text when it is UTF-8 (as every path was before
    /// names that are not UTF-8 were listed), else a blob of its bytes.
    static func column(_ path: DiskPath) -> SQLiteDatabase.Value {
        path.string.map { .text($0) } ?? .blob(Array(path.bytes))
    }
}
