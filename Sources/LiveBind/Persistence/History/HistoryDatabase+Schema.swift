import LiveBindEngine
extension HistoryDatabase {
    /// The tables of format 1. `commits` holds each commit's record (see `Commit+Record.swift`) with
    /// its time in milliseconds since 1970; `changes` one row per change, under the pointer it changed
    /// (`""` for a whole model), with the number a `set` wrote (the fast path of a series); the index
    /// `changes_path` answers a location's series alone. `checkpoints` are whole documents (NULL: the
    /// model was gone), `marks` the points the history may be cut at. `commits` has no index but its
    /// key: times grow with sequences (a point in time is found by bisection), and a model's commits
    /// since a checkpoint are found by a scan of at most a checkpoint's worth.
    static let schema = """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE commits(sequence INTEGER PRIMARY KEY, model TEXT NOT NULL, revision INTEGER NOT NULL,
                             time INTEGER NOT NULL, record BLOB NOT NULL);
        CREATE TABLE changes(model TEXT NOT NULL, path TEXT NOT NULL, sequence INTEGER NOT NULL,
                             position INTEGER NOT NULL, time INTEGER NOT NULL, number REAL);
        CREATE INDEX changes_path ON changes(model, path, sequence, position, time, number);
        CREATE TABLE checkpoints(model TEXT NOT NULL, sequence INTEGER NOT NULL, revision INTEGER NOT NULL,
                                 document BLOB, PRIMARY KEY(model, sequence)) WITHOUT ROWID;
        CREATE TABLE marks(sequence INTEGER PRIMARY KEY, time INTEGER NOT NULL, bytes INTEGER NOT NULL,
                           changes INTEGER NOT NULL);
        PRAGMA user_version = 1;
        """

    /// Creates the tables in an empty file; refuses files of another kind or format.
    static func migrate(_ database: SQLiteConnection, path: String) throws(StateDatabaseError) {
        do {
            let (format, isEmpty) = try database.format()
            if format == 0 {
                guard isEmpty else { throw StateDatabaseError.notLiveBind(path: path, reason: "it holds other tables") }
                try database.execute("BEGIN IMMEDIATE; " + schema + " COMMIT;")
            } else if format != formatVersion {
                throw StateDatabaseError.notLiveBind(path: path, reason: "history format \(format) is not \(formatVersion)")
            }
        } catch let error as StateDatabaseError {
            throw error
        } catch {
            throw StateDatabaseError.from(error, path: path)
        }
    }

    /// The history's bounds, as `meta` keeps them.
    struct Meta {
        /// The first event the history covers whole (its first checkpoint), and when.
        var start: UInt64 = 0, startTime: Int64 = 0
        /// The last event recorded, and when.
        var last: UInt64 = 0, lastTime: Int64 = 0
        /// About the bytes recorded in all (never decreases; marks keep it at each checkpoint).
        var bytes: Int64 = 0
    }

    /// The writer thread's connection and statements.
    final class Writer: @unchecked Sendable {
        // `@unchecked`: used by one thread at a time (`init`, `start`, then the writer thread).
        let database: SQLiteConnection
        private let appendCommitStatement, appendChangeStatement, saveCheckpointStatement, saveMarkStatement,
            saveMetaStatement: SQLiteStatement

        init(_ database: SQLiteConnection) throws(SQLiteError) {
            self.database = database
            appendCommitStatement = try database.prepare(
                "INSERT OR REPLACE INTO commits(sequence, model, revision, time, record) VALUES(?1, ?2, ?3, ?4, ?5)")
            appendChangeStatement = try database.prepare(
                "INSERT INTO changes(model, path, sequence, position, time, number) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
            saveCheckpointStatement = try database.prepare(
                "INSERT OR REPLACE INTO checkpoints(model, sequence, revision, document) VALUES(?1, ?2, ?3, ?4)")
            saveMarkStatement = try database.prepare(
                "INSERT OR REPLACE INTO marks(sequence, time, bytes, changes) VALUES(?1, ?2, ?3, (SELECT coalesce(max(rowid), 0) FROM changes))"
            )
            saveMetaStatement = try database.prepare(
                "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2")
        }

        func transaction(_ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
            try database.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                try body()
                try database.execute("COMMIT")
            } catch {
                if database.isInTransaction { try? database.execute("ROLLBACK") }
                throw error
            }
        }

        func appendCommit(_ commit: Commit, time: Int64, record: [UInt8]) throws(SQLiteError) {
            try appendCommitStatement.bind(1, Int64(commit.sequence))
            try appendCommitStatement.bind(2, commit.model)
            try appendCommitStatement.bind(3, Int64(commit.revision))
            try appendCommitStatement.bind(4, time)
            try appendCommitStatement.bind(5, record)
            try appendCommitStatement.run()
        }

        func appendChange(_ model: String, path: String, sequence: UInt64, position: Int, time: Int64, number: Double?)
            throws(SQLiteError)
        {
            try appendChangeStatement.bind(1, model)
            try appendChangeStatement.bind(2, path)
            try appendChangeStatement.bind(3, Int64(sequence))
            try appendChangeStatement.bind(4, Int64(position))
            try appendChangeStatement.bind(5, time)
            try appendChangeStatement.bind(6, number)
            try appendChangeStatement.run()
        }

        /// A checkpoint of `model` at `sequence`; a nil `document` says it did not exist then.
        func saveCheckpoint(_ model: String, sequence: UInt64, revision: UInt64, document: [UInt8]?) throws(SQLiteError) {
            try saveCheckpointStatement.bind(1, model)
            try saveCheckpointStatement.bind(2, Int64(sequence))
            try saveCheckpointStatement.bind(3, Int64(revision))
            if let document { try saveCheckpointStatement.bind(4, document) }
            try saveCheckpointStatement.run()
        }

        func saveMark(sequence: UInt64, time: Int64, bytes: Int64) throws(SQLiteError) {
            try saveMarkStatement.bind(1, Int64(sequence))
            try saveMarkStatement.bind(2, time)
            try saveMarkStatement.bind(3, bytes)
            try saveMarkStatement.run()
        }

        private func save(_ key: String, _ value: Int64) throws(SQLiteError) {
            try saveMetaStatement.bind(1, key)
            try saveMetaStatement.bind(2, value)
            try saveMetaStatement.run()
        }

        func saveMeta(start: UInt64, startTime: Int64, last: UInt64, lastTime: Int64, bytes: Int64) throws(SQLiteError) {
            try save("start", Int64(start))
            try save("startTime", startTime)
            try saveLast(last, time: lastTime, bytes: bytes)
        }

        func saveLast(_ last: UInt64, time: Int64, bytes: Int64) throws(SQLiteError) {
            try save("last", Int64(last))
            try save("lastTime", time)
            try save("bytes", bytes)
        }

        func readMeta() throws(SQLiteError) -> Meta {
            try HistoryDatabase.readMeta(database)
        }

        /// The models of the commits after the last mark, each with its last commit there: what the
        /// next checkpoint must write.
        func touchedSinceLastMark() throws(SQLiteError) -> [String: UInt64] {
            let rows = try database.prepare(
                """
                SELECT model, max(sequence) FROM commits
                WHERE sequence > (SELECT coalesce(max(sequence), 0) FROM marks) GROUP BY model
                """)
            var touched: [String: UInt64] = [:]
            while try rows.step() { touched[rows.text(0)] = UInt64(rows.int64(1)) }
            return touched
        }

        /// Drops what `retention` no longer keeps: everything before the newest mark older than its
        /// age, or before the oldest mark after which the history fits its size.
        func trim(keeping retention: HistoryRetention, now: Int64, total: Int64) throws(SQLiteError) {
            var cut: Int64 = 0
            if let age = retention.age {
                let rows = try database.prepare("SELECT coalesce(max(sequence), 0) FROM marks WHERE time <= ?1")
                try rows.bind(1, now - age)
                if try rows.step() { cut = max(cut, rows.int64(0)) }
            }
            if let bytes = retention.bytes {
                let rows = try database.prepare("SELECT coalesce(min(sequence), 0) FROM marks WHERE ?1 - bytes <= ?2")
                try rows.bind(1, total)
                try rows.bind(2, bytes)
                if try rows.step() { cut = max(cut, rows.int64(0)) }
            }
            let meta = try readMeta()
            guard cut > Int64(meta.start) else { return }
            let mark = try database.prepare("SELECT time, changes FROM marks WHERE sequence = ?1")
            try mark.bind(1, cut)
            guard try mark.step() else { return }
            let (time, changes) = (mark.int64(0), mark.int64(1))
            mark.reset()
            let statements = [
                "DELETE FROM commits WHERE sequence <= ?1",
                // The mark's `changes` is the last row when it was written, which may already hold rows of
                // commits after the cut (recorded before the checkpoint was): the range is bounded by
                // rowid, each row kept or dropped by its own commit.
                "DELETE FROM changes WHERE rowid <= ?2 AND sequence <= ?1",
                """
                DELETE FROM checkpoints WHERE sequence < ?1 AND EXISTS (SELECT 1 FROM checkpoints AS later
                    WHERE later.model = checkpoints.model AND later.sequence > checkpoints.sequence AND later.sequence <= ?1)
                """,
                "DELETE FROM checkpoints WHERE sequence <= ?1 AND document IS NULL",
                "DELETE FROM marks WHERE sequence < ?1"
            ]
            for sql in statements {
                let statement = try database.prepare(sql)
                try statement.bind(1, cut)
                if sql.contains("?2") { try statement.bind(2, changes) }
                try statement.run()
            }
            try save("start", cut)
            try save("startTime", time)
        }
    }

    static func readMeta(_ database: SQLiteConnection) throws(SQLiteError) -> Meta {
        let rows = try database.prepare("SELECT key, value FROM meta")
        var meta = Meta()
        while try rows.step() {
            let value = rows.int64(1)
            switch rows.text(0) {
            case "start": meta.start = UInt64(max(0, value))
            case "startTime": meta.startTime = value
            case "last": meta.last = UInt64(max(0, value))
            case "lastTime": meta.lastTime = value
            case "bytes": meta.bytes = value
            default: break
            }
        }
        return meta
    }
}
