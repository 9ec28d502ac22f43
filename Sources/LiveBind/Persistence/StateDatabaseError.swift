import LiveBindEngine
/// Why a data directory cannot be used; each message says what to do.
enum StateDatabaseError: Error, CustomStringConvertible {
    /// The directory does not exist and cannot be created, or is not a directory.
    case directory(String, reason: String)
    /// The database file cannot be opened, read or written.
    case unusable(path: String, SQLiteError)
    /// The file is not a LiveBind database, or its contents cannot be read back.
    case notLiveBind(path: String, reason: String)

    var description: String {
        switch self {
        case .directory(let path, let reason):
            "data directory '\(path)': \(reason)"
        case .unusable(let path, let error) where error.code == 26:
            "'\(path)' is not a SQLite database (damaged or another file): move it away, or pass another --data directory (\(error.message))"
        case .unusable(let path, let error) where error.code == 5:
            "'\(path)' is in use by another process (is another livebind-server running with this --data directory?)"
        case .unusable(let path, let error):
            "cannot use '\(path)': \(error)"
        case .notLiveBind(let path, let reason):
            "'\(path)' is not a LiveBind database this version can read: \(reason); move it away, or pass another --data directory"
        }
    }

    static func from(_ error: any Error, path: String) -> StateDatabaseError {
        switch error {
        case let error as StateDatabaseError: error
        case let error as SQLiteError: .unusable(path: path, error)
        default: .unusable(path: path, SQLiteError(code: 0, message: "\(error)", context: "opening"))
        }
    }
}
