import LiveBindEngine
/// A failed SQLite call: the result code, SQLite's message and what LiveBind was doing.
struct SQLiteError: Error, Equatable, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL` is 13, `SQLITE_NOTADB` 26, …).
    let code: Int32
    /// SQLite's own message (`sqlite3_errmsg`).
    let message: String
    /// The statement or step that failed.
    let context: String

    var description: String { "\(context): \(message) (SQLite code \(code))" }
}
