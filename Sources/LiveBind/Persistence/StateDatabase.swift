import Synchronization
import LiveBindEngine

/// The data directory's `livebind.sqlite`: the store's commit log, its checkpoints and the bindings
/// made over HTTP, in SQLite (WAL, `synchronous=FULL`).
///
/// As the store's ``CommitLog`` it records each commit's changes (not the model's document) and makes
/// them durable in groups: a background thread writes every commit appended since its last sync in one
/// transaction, syncs once, and reports the batch durable. Whole documents are written only as
/// checkpoints, by the same thread, once `checkpointBytes` of log were written since the last one; a
/// restart loads the last checkpoint and replays the log after it.
///
/// When a transaction fails (disk full, the file became read-only, a failed sync) nothing of it is
/// reported durable, and the log takes no more commits: every later write fails with
/// ``StoreError/storageFailed(_:)`` until the server restarts and reloads what is on disk.
final class StateDatabase: CommitLog, Sendable {
    /// The database file's name inside the data directory.
    static let fileName = "livebind.sqlite"
    /// The schema this code writes (`PRAGMA user_version`).
    static let formatVersion: Int64 = 2
    /// The default for `checkpointBytes`.
    static let defaultCheckpointBytes = 16 << 20

    /// The data directory.
    let directory: String
    /// Commits kept in the log for `Last-Event-ID` resumes across restarts.
    let retainedEvents: Int
    let writer: CommitWriter

    /// Opens (creating when needed) the data directory and its database, and takes it for this process.
    /// `beforeSync` is a test seam, called on the writer thread before each transaction.
    init(
        directory: String, retainedEvents: Int, checkpointBytes: Int = StateDatabase.defaultCheckpointBytes,
        receipts: ReceiptRetention = ReceiptRetention(), beforeSync: (@Sendable () -> Void)? = nil
    ) throws(StateDatabaseError) {
        try DataDirectory.prepare(directory)
        let path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        let connection: Connection
        do {
            let database = try SQLiteConnection(path: path)
            try Self.configure(database)
            try Self.migrate(database, path: path)
            connection = try Connection(database)
        } catch {
            throw StateDatabaseError.from(error, path: path)
        }
        self.directory = directory
        self.retainedEvents = max(1, retainedEvents)
        writer = CommitWriter(
            connection: connection, retainedEvents: max(1, retainedEvents),
            checkpointBytes: max(1, checkpointBytes), receipts: receipts, beforeSync: beforeSync)
    }

    /// How long and how many receipts of idempotent writes are kept (`--idempotency-window`, `--idempotency-keys`).
    struct ReceiptRetention: Sendable {
        var window: Duration = .seconds(86_400)
        var capacity = 100_000
    }

    deinit { writer.stop() }

    /// Writes what is queued and closes the file: another process may open the directory then.
    /// Reads and writes of the database are over; the store's writes must already be refused.
    func close() { writer.stop() }

    /// Whether ``close()`` was called.
    var isClosed: Bool { writer.isClosed }

    /// WAL with a sync at every commit; the file locked for this process (a second server on the same
    /// directory fails to start instead of corrupting it).
    ///
    /// An opener waits up to 2 s for the lock: the store that held the file last may be released on the
    /// log's thread (when that thread held the last reference), which closes the file a moment after
    /// its owner let it go.
    private static func configure(_ database: SQLiteConnection) throws(SQLiteError) {
        try database.execute("PRAGMA busy_timeout = 2000")
        try database.execute("PRAGMA locking_mode = EXCLUSIVE")
        try database.useWriteAheadLog()
        try database.execute("PRAGMA synchronous = FULL")
    }

    // MARK: CommitLog

    func attach(to store: Store) { writer.attach(to: store) }

    func append(_ commit: Commit) { writer.append(commit) }

    func append(contentsOf commits: [Commit]) { writer.append(contentsOf: commits) }

    func flush() { writer.flush() }

    // MARK: The connection

    /// Runs `body` with the connection locked.
    func withConnection<R: Sendable, E: Error>(_ body: (inout Connection) throws(E) -> R) throws(E) -> R {
        try writer.withConnection(body)
    }

    /// Runs `body` in one write transaction and commits it (synced to disk before returning).
    func transaction(_ body: (Connection) throws(SQLiteError) -> Void) throws(StoreError) {
        try writer.transaction(body)
    }
}
