import LiveBindEngine
internal import CSQLite

/// One SQLite database connection, opened read-write.
///
/// > Important: Not thread-safe: its owner serialises every use (``StateDatabase`` keeps it behind a lock).
/// Statements keep their connection alive; the connection closes when the last of them is gone.
final class SQLiteConnection {
    let handle: OpaquePointer

    /// Opens (creating when missing) the database file at `path`. The corresponding C function is
    /// `sqlite3_open_v2`.
    init(path: String) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw SQLiteError(code: code, message: message, context: "opening \(path)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 0)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows. The corresponding C function is `sqlite3_exec`.
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql) }
    }

    /// Compiles one statement. The corresponding C function is `sqlite3_prepare_v2`.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, sql) }
        return SQLiteStatement(handle: statement, connection: self, sql: sql)
    }

    /// Whether a transaction is open (`false` after SQLite rolled one back by itself). The corresponding
    /// C function is `sqlite3_get_autocommit`.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The error for `code`, with the connection's message.
    func error(_ code: Int32, _ context: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), context: context)
    }

    /// Switches the file to write-ahead logging; throws when its file system cannot hold it.
    func useWriteAheadLog() throws(SQLiteError) {
        let mode = try prepare("PRAGMA journal_mode = WAL")
        guard try mode.step(), mode.text(0).lowercased() == "wal" else {
            throw SQLiteError(code: 0, message: "the file system does not support WAL", context: "PRAGMA journal_mode = WAL")
        }
    }

    /// The file's `PRAGMA user_version`, and whether it holds no table at all (a new file).
    func format() throws(SQLiteError) -> (version: Int64, isEmpty: Bool) {
        let version = try prepare("PRAGMA user_version")
        _ = try version.step()
        let tables = try prepare("SELECT count(*) FROM sqlite_master")
        _ = try tables.step()
        return (version.int64(0), tables.int64(0) == 0)
    }
}
