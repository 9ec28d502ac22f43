import Synchronization

/// The data directory's `livebind.sqlite`: the models, the store's sequence, the retained event log and
/// the bindings made over HTTP, in SQLite (WAL, `synchronous=FULL`).
///
/// As the store's ``StoreJournal`` it writes each commit in one transaction (the model's new document,
/// the event frame, the trimmed event log and the sequence) and returns only once SQLite has synced it,
/// while the store is still locked: nothing can be read, streamed or acknowledged before it is durable.
///
/// When a write fails before `COMMIT` (disk full, the file became read-only) the transaction is rolled
/// back, the store undoes the write, and later writes may succeed. When `COMMIT` itself fails, SQLite
/// cannot say whether the transaction reached the disk, so the database stops accepting writes (each
/// fails with ``StoreError/storageFailed(_:)``) until the server restarts and reloads what is on disk.
///
/// > Important: `record` is called with the store locked; every method takes the database's own lock
/// and never calls the store.
final class StateDatabase: StoreJournal, Sendable {
    /// The database file's name inside the data directory.
    static let fileName = "livebind.sqlite"
    /// The schema this code writes (`PRAGMA user_version`).
    static let formatVersion: Int64 = 1

    /// The data directory.
    let directory: String
    /// Commit events kept for `Last-Event-ID` resumes across restarts.
    let retainedEvents: Int
    private let connection: Mutex<Connection>
    /// Only orders critical sections for the thread sanitizer, as ``Store/withState(_:)`` explains.
    private let lockOrder = Atomic<Int>(0)

    /// The connection and its prepared statements, used only under the lock.
    struct Connection {
        let database: SQLiteConnection
        let begin, commit, rollback: SQLiteStatement
        let upsertModel, deleteModel, insertEvent, trimEvents, saveSequence: SQLiteStatement
        /// Set when a `COMMIT` failed: what happened, for every later write's error.
        var failure: String?
    }

    /// Opens (creating when needed) the data directory and its database, and takes it for this process.
    init(directory: String, retainedEvents: Int) throws(StateDatabaseError) {
        try DataDirectory.prepare(directory)
        let path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        do {
            let database = try SQLiteConnection(path: path)
            try Self.configure(database)
            try Self.migrate(database, path: path)
            connection = Mutex(Connection(
                database: database,
                begin: try database.prepare("BEGIN IMMEDIATE"),
                commit: try database.prepare("COMMIT"),
                rollback: try database.prepare("ROLLBACK"),
                upsertModel: try database.prepare(
                    "INSERT INTO models(name, revision, document) VALUES(?1, ?2, ?3) "
                        + "ON CONFLICT(name) DO UPDATE SET revision = ?2, document = ?3"),
                deleteModel: try database.prepare("DELETE FROM models WHERE name = ?1"),
                insertEvent: try database.prepare("INSERT INTO events(sequence, model, frame) VALUES(?1, ?2, ?3)"),
                trimEvents: try database.prepare("DELETE FROM events WHERE sequence <= ?1"),
                saveSequence: try database.prepare(
                    "INSERT INTO meta(key, value) VALUES('sequence', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1")))
        } catch {
            throw StateDatabaseError.from(error, path: path)
        }
        self.directory = directory
        self.retainedEvents = max(1, retainedEvents)
    }

    /// WAL with a sync at every commit; the file locked for this process (a second server on the same
    /// directory fails to start instead of corrupting it).
    private static func configure(_ database: SQLiteConnection) throws(SQLiteError) {
        try database.execute("PRAGMA locking_mode = EXCLUSIVE")
        let mode = try database.prepare("PRAGMA journal_mode = WAL")
        guard try mode.step(), mode.text(0).lowercased() == "wal" else {
            throw SQLiteError(code: 0, message: "the file system does not support WAL", context: "PRAGMA journal_mode = WAL")
        }
        mode.reset()
        try database.execute("PRAGMA synchronous = FULL")
    }

    /// Records one commit durably; see the type's discussion for what a failure leaves behind.
    func record(_ commit: Commit, document: JSON) throws(StoreError) {
        let frame = EventEncoder.frame(for: commit).bytes
        let sequence = Int64(commit.sequence)
        try transaction { (connection) throws(SQLiteError) in
            if case .drop = commit.kind {
                try connection.deleteModel.bind(1, commit.model)
                try connection.deleteModel.run()
            } else {
                try connection.upsertModel.bind(1, commit.model)
                try connection.upsertModel.bind(2, Int64(commit.revision))
                try connection.upsertModel.bind(3, document.encoded())
                try connection.upsertModel.run()
            }
            try connection.insertEvent.bind(1, sequence)
            try connection.insertEvent.bind(2, commit.model)
            try connection.insertEvent.bind(3, frame)
            try connection.insertEvent.run()
            try connection.trimEvents.bind(1, sequence - Int64(retainedEvents))
            try connection.trimEvents.run()
            try connection.saveSequence.bind(1, sequence)
            try connection.saveSequence.run()
        }
    }

    /// Runs `body` with the connection locked.
    func withConnection<R: Sendable, E: Error>(_ body: (inout Connection) throws(E) -> R) throws(E) -> R {
        try connection.withLock { (connection) throws(E) -> R in
            _ = lockOrder.load(ordering: .acquiring)
            defer { lockOrder.store(0, ordering: .releasing) }
            return try body(&connection)
        }
    }

    /// Runs `body` in one write transaction and commits it (synced to disk before returning).
    ///
    /// A failure inside `body` rolls back and throws; a failed `COMMIT` also marks the database failed.
    func transaction(_ body: (Connection) throws(SQLiteError) -> Void) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            if let failure = connection.failure {
                throw .storageFailed("an earlier write could not be committed (\(failure)); restart the server")
            }
            do throws(SQLiteError) {
                try connection.begin.run()
                try body(connection)
            } catch {
                if connection.database.isInTransaction { try? connection.rollback.run() }
                throw .storageFailed(error.description)
            }
            do throws(SQLiteError) {
                try connection.commit.run()
            } catch {
                connection.failure = error.description
                if connection.database.isInTransaction { try? connection.rollback.run() }
                throw .storageFailed(error.description)
            }
        }
    }
}
