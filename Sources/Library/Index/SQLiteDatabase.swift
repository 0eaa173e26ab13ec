import CSQLite

/// A small wrapper over one SQLite connection (Debian `libsqlite3-dev`): open, execute,
/// prepared statements. Not thread-safe by itself: `LibraryIndex` serialises every use behind
/// its own lock.
final class SQLiteDatabase {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        /// SQLite's primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …); `SQLITE_ERROR` when
        /// the failure is not SQLite's own.
        var code: Int32 = SQLITE_ERROR

        /// The file is damaged or not a database at all (`SQLITE_CORRUPT`, `SQLITE_NOTADB`), as
        /// opposed to busy, locked, read-only or out of space.
        var isDamage: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
    }

    private var handle: OpaquePointer?

    /// Opens (creating) the database at `path`; a symlink at `path` is not followed
    /// (`SQLITE_OPEN_NOFOLLOW`): the file written is the one named, never one elsewhere.
    /// - Throws: `Failure` with SQLite's message and code.
    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw Failure(description: "cannot open \(path): \(message)", code: status & 0xFF)
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { sqlite3_close(handle) }

    /// Runs one or more statements without results.
    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw Failure(description: message, code: sqlite3_errcode(handle) & 0xFF)
        }
    }

    func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)), code: sqlite3_errcode(handle) & 0xFF)
        }
        return Statement(statement)
    }

    /// Runs `body` in one transaction, committed when it returns and rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// A prepared statement; values bind by 1-based index, columns read by 0-based index.
    final class Statement {
        private let statement: OpaquePointer

        init(_ statement: OpaquePointer) { self.statement = statement }
        deinit { sqlite3_finalize(statement) }

        func bind(_ values: [Value]) {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (i, value) in values.enumerated() {
                let index = Int32(i + 1)
                switch value {
                case .integer(let v): sqlite3_bind_int64(statement, index, v)
                case .text(let v): sqlite3_bind_text(statement, index, v, -1, SQLITE_TRANSIENT)
                case .blob(let v):
                    _ = v.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT) }
                case .null: sqlite3_bind_null(statement, index)
                }
            }
        }

        /// Steps once; true while a row is available.
        func step() throws -> Bool {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            case let status: throw Failure(description: String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))),
                                           code: status & 0xFF)
            }
        }

        /// Binds and runs to completion.
        func run(_ values: [Value]) throws {
            bind(values)
            while try step() {}
        }

        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

        /// Whether the column's value is NULL.
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

        func text(_ column: Int32) -> String? {
            sqlite3_column_text(statement, column).map { String(cString: $0) }
        }

        /// The column's bytes, stored as text or as a blob; nil when NULL.
        func bytes(_ column: Int32) -> [UInt8]? {
            guard sqlite3_column_type(statement, column) != SQLITE_NULL else { return nil }
            // sqlite3_column_blob before sqlite3_column_bytes, as the SQLite docs ask.
            let start = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            guard let start, count > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: start, count: count))
        }
    }

    enum Value {
        case integer(Int64)
        case text(String)
        /// Bytes stored as they are (a path that is not UTF-8, which a `text` cannot hold).
        case blob([UInt8])
        case null
    }
}

/// SQLite's "copy this string now" destructor, which Swift cannot import as a macro.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
