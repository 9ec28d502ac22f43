import LiveBindEngine
internal import CSQLite

/// One compiled SQL statement: bind parameters (numbered from 1), step through rows, read columns
/// (numbered from 0), reset to run again.
///
/// > Important: Used only by its connection's owner, under the same lock.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    let sql: String

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds an integer. The corresponding C function is `sqlite3_bind_int64`.
    func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Binds UTF-8 text (SQLite copies it). The corresponding C function is `sqlite3_bind_text`.
    func bind(_ index: Int32, _ value: String) throws(SQLiteError) {
        var value = value
        let code = value.withUTF8 { text in
            text.withMemoryRebound(to: CChar.self) { livebind_sqlite3_bind_text(handle, index, $0.baseAddress, Int32(text.count)) }
        }
        try check(code)
    }

    /// Binds bytes as a blob (SQLite copies them). The corresponding C function is `sqlite3_bind_blob`.
    func bind(_ index: Int32, _ value: [UInt8]) throws(SQLiteError) {
        let code = value.withUnsafeBytes { bytes in
            livebind_sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count))
        }
        try check(code)
    }

    /// Runs the statement to its next row: `true` when a row is ready, `false` when done. The
    /// corresponding C function is `sqlite3_step`.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw connection.error(code, sql)
        }
    }

    /// Steps a statement that returns no rows, then resets it.
    func run() throws(SQLiteError) {
        defer { reset() }
        _ = try step()
    }

    /// Makes the statement ready to run again and clears its bindings. The corresponding C functions
    /// are `sqlite3_reset` and `sqlite3_clear_bindings`.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds an integer, or NULL for nil. The corresponding C functions are `sqlite3_bind_int64` and `sqlite3_bind_null`.
    func bind(_ index: Int32, _ value: Int64?) throws(SQLiteError) {
        try check(value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index))
    }

    /// Binds a number, or NULL for nil. The corresponding C functions are `sqlite3_bind_double` and `sqlite3_bind_null`.
    func bind(_ index: Int32, _ value: Double?) throws(SQLiteError) {
        try check(value.map { sqlite3_bind_double(handle, index, $0) } ?? sqlite3_bind_null(handle, index))
    }

    /// The number in `column` of the current row. The corresponding C function is `sqlite3_column_double`.
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// The integer in `column` of the current row. The corresponding C function is `sqlite3_column_int64`.
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Whether `column` of the current row is NULL. The corresponding C function is `sqlite3_column_type`.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The bytes of `column` of the current row (text or blob). The corresponding C functions are
    /// `sqlite3_column_blob` and `sqlite3_column_bytes`.
    func bytes(_ column: Int32) -> [UInt8] {
        // The pointer first, then the size: the order SQLite documents.
        guard let base = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The UTF-8 text of `column` of the current row.
    func text(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK else { throw connection.error(code, sql) }
    }
}
