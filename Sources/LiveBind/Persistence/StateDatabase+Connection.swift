import LiveBindEngine
extension StateDatabase {
    /// The connection and its prepared statements, used only under the writer's lock.
    struct Connection {
        let database: SQLiteConnection
        let begin, commit, rollback: SQLiteStatement
        let appendCommit, upsertModel, deleteModel, saveCheckpoint, saveLastEvent, saveRoomsOpenSince, trimLog: SQLiteStatement
        let appendReceipt, expireReceipts: SQLiteStatement
        /// Set when a transaction failed: what happened, for every later write's error.
        var failure: String?

        init(_ database: SQLiteConnection) throws(SQLiteError) {
            self.database = database
            begin = try database.prepare("BEGIN IMMEDIATE")
            commit = try database.prepare("COMMIT")
            rollback = try database.prepare("ROLLBACK")
            appendCommit = try database.prepare("INSERT INTO log(sequence, model, revision, record) VALUES(?1, ?2, ?3, ?4)")
            upsertModel = try database.prepare(
                "INSERT INTO models(name, revision, document, size, size_revision) VALUES(?1, ?2, ?3, ?4, ?2) "
                    + "ON CONFLICT(name) DO UPDATE SET revision = ?2, document = ?3, size = ?4, size_revision = ?2")
            deleteModel = try database.prepare("DELETE FROM models WHERE name = ?1")
            saveCheckpoint = try database.prepare(
                "INSERT INTO meta(key, value) VALUES('checkpoint', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1")
            // The newest sequence when it is an ephemeral model's (EphemeralModels), which the log leaves out.
            saveLastEvent = try database.prepare(
                "INSERT INTO meta(key, value) VALUES('last_event', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1")
            // Where the span of open presence rooms began (0: none is open), for a restart after a crash.
            saveRoomsOpenSince = try database.prepare(
                "INSERT INTO meta(key, value) VALUES('rooms_open_since', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1")
            trimLog = try database.prepare("DELETE FROM log WHERE sequence <= ?1")
            appendReceipt = try database.prepare(
                "INSERT INTO receipts(sequence, tag, model, revision, insert_index, created, scope) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            expireReceipts = try database.prepare("DELETE FROM receipts WHERE created < ?1")
        }
    }
}
