import LiveBindEngine
extension StateDatabase {
    /// The tables of format 2. `models` is the last checkpoint (at `meta.checkpoint`), `log` the commits,
    /// each as ``Commit``'s record; documents and records are UTF-8 JSON stored as blobs.
    static let schema = """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE models(name TEXT PRIMARY KEY, revision INTEGER NOT NULL, document BLOB NOT NULL);
        CREATE TABLE log(sequence INTEGER PRIMARY KEY, model TEXT NOT NULL, revision INTEGER NOT NULL,
                         record BLOB NOT NULL);
        CREATE TABLE bindings(position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                              definition BLOB NOT NULL);
        CREATE TABLE binding_states(id TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
        PRAGMA user_version = 2;
        """

    /// Format 1 kept every model's whole document after each commit, and the stream's frames: its
    /// models become the checkpoint at its last sequence, and its frames are dropped (a client that
    /// resumes across the upgrade gets `resync`).
    static let upgradeFromFormat1 = """
        INSERT INTO meta(key, value) SELECT 'checkpoint', value FROM meta WHERE key = 'sequence'
            ON CONFLICT(key) DO UPDATE SET value = excluded.value;
        DELETE FROM meta WHERE key = 'sequence';
        DROP TABLE events;
        CREATE TABLE log(sequence INTEGER PRIMARY KEY, model TEXT NOT NULL, revision INTEGER NOT NULL,
                         record BLOB NOT NULL);
        PRAGMA user_version = 2;
        """

    /// Receipts of writes sent with `Idempotency-Key` (`CommitReceipt`), written in the transaction of
    /// their commit and kept for the idempotency window; `insert_index` -1 is none, `created` is in
    /// milliseconds since 1970. `answers` keeps the receipts of `/bindings` writes (the answer itself,
    /// `StateDatabase.AnswerRecord`), written in the transaction of their change. Added to format 2
    /// files as they are opened, and then their `scope` column (whose receipts they are, see
    /// `addScopes`).
    static let receiptsTable = """
        CREATE TABLE IF NOT EXISTS receipts(sequence INTEGER PRIMARY KEY, tag TEXT NOT NULL, model TEXT NOT NULL,
                                            revision INTEGER NOT NULL, insert_index INTEGER NOT NULL,
                                            created INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS answers(position INTEGER PRIMARY KEY AUTOINCREMENT, created INTEGER NOT NULL,
                                           receipt BLOB NOT NULL);
        CREATE INDEX IF NOT EXISTS answers_created ON answers(created);
        """

    /// Creates the tables in an empty file, upgrades format 1, refuses files of another kind or a newer
    /// format, and makes one write, so an unwritable directory fails now and the exclusive lock is
    /// taken now.
    static func migrate(_ database: SQLiteConnection, path: String) throws(StateDatabaseError) {
        do {
            try database.execute("BEGIN IMMEDIATE")
            let (format, isEmpty) = try database.format()
            if format == 0 {
                guard isEmpty else {
                    try? database.execute("ROLLBACK")
                    throw StateDatabaseError.notLiveBind(path: path, reason: "it holds other tables")
                }
                try database.execute(schema)
            } else if format == 1 {
                try database.execute(upgradeFromFormat1)
            } else if format > formatVersion {
                try? database.execute("ROLLBACK")
                throw StateDatabaseError.notLiveBind(
                    path: path, reason: "format \(format) was written by a newer LiveBind (this one reads \(formatVersion))")
            }
            try database.execute(receiptsTable)
            try addScopes(database)
            try addModelSizes(database)
            try database.execute(
                "INSERT INTO meta(key, value) VALUES('format', \(formatVersion)) ON CONFLICT(key) DO UPDATE SET value = \(formatVersion)")
            try database.execute("COMMIT")
        } catch let error as StateDatabaseError {
            throw error
        } catch {
            if database.isInTransaction { try? database.execute("ROLLBACK") }
            throw StateDatabaseError.from(error, path: path)
        }
    }

    /// Each checkpointed model's counted size (`JSON.countedSize`) and the revision it was counted
    /// at, so that a restart does not measure every document again (a third of the time it took to
    /// load 1 GB). Added to format 2 files as they are opened. NULL (rows from before) means "measure
    /// it"; so does a size at another revision, or smaller than the document (a counted size is its
    /// length plus one per container that is not empty). An older LiveBind rewrites a row's document
    /// without its size: the trigger, which runs whoever writes the file, forgets the size then (a
    /// model dropped and made again may be at the revision its old size names). A change to how
    /// `countedSize` counts must forget every stored size (`UPDATE models SET size = NULL`).
    static func addModelSizes(_ database: SQLiteConnection) throws(SQLiteError) {
        let columns = try database.prepare("SELECT count(*) FROM pragma_table_info('models') WHERE name = 'size'")
        if try columns.step(), columns.int64(0) == 0 {
            try database.execute("ALTER TABLE models ADD COLUMN size INTEGER; ALTER TABLE models ADD COLUMN size_revision INTEGER;")
        }
        try database.execute(
            """
            CREATE TRIGGER IF NOT EXISTS models_size_unknown AFTER UPDATE OF document ON models
            WHEN NEW.size IS OLD.size AND NEW.size_revision IS OLD.size_revision
            BEGIN UPDATE models SET size = NULL WHERE name = NEW.name; END;
            """)
    }
}
