import LiveBindEngine
extension StateDatabase {
    /// A binding made over HTTP, as it was posted (with its id filled in).
    struct StoredBinding: Sendable {
        var id: String
        var definition: JSON
    }

    /// The receipt of a `/bindings` write sent with `Idempotency-Key`, kept with its change: the
    /// server's encoding of its answer (`AnswerReceipt`), made at `created` (seconds since 1970).
    struct AnswerRecord: Sendable {
        var receipt: JSON
        var created: Double
    }

    /// The bindings made over HTTP in creation order, and the enabled flags set over HTTP (by binding id).
    func bindings() -> (created: [StoredBinding], enabled: [(id: String, enabled: Bool)]) {
        withConnection { connection in
            var created: [StoredBinding] = []
            var enabled: [(id: String, enabled: Bool)] = []
            do {
                let rows = try connection.database.prepare("SELECT id, definition FROM bindings ORDER BY position")
                while try rows.step() {
                    if let definition = try? JSON(parsing: rows.bytes(1)) {
                        created.append(StoredBinding(id: rows.text(0), definition: definition))
                    }
                }
                let states = try connection.database.prepare("SELECT id, enabled FROM binding_states ORDER BY id")
                while try states.step() { enabled.append((states.text(0), states.int64(1) != 0)) }
            } catch {
                return ([], [])
            }
            return (created, enabled)
        }
    }

    /// The receipts of `/bindings` writes made since `since` (seconds since 1970), oldest first; empty
    /// when they cannot be read (a retry then runs again).
    func answers(since: Double) -> [JSON] {
        withConnection { connection in
            var answers: [JSON] = []
            do {
                let rows = try connection.database.prepare("SELECT receipt FROM answers WHERE created >= ?1 ORDER BY position")
                try rows.bind(1, Int64(since * 1000))
                while try rows.step() {
                    if let receipt = try? JSON(parsing: rows.bytes(0)) { answers.append(receipt) }
                }
            } catch {
                return []
            }
            return answers
        }
    }

    /// Keeps a binding made over HTTP, and the receipt of the request that made it.
    func saveBinding(id: String, definition: JSON, answer: AnswerRecord? = nil) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in
            let insert = try connection.database.prepare(
                "INSERT INTO bindings(id, definition) VALUES(?1, ?2) ON CONFLICT(id) DO UPDATE SET definition = ?2")
            try insert.bind(1, id)
            try insert.bind(2, definition.encoded())
            try insert.run()
            try keep(answer, connection)
        }
    }

    /// Keeps a binding's enabled flag (set over HTTP).
    func saveEnabled(id: String, _ enabled: Bool) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in
            let upsert = try connection.database.prepare(
                "INSERT INTO binding_states(id, enabled) VALUES(?1, ?2) ON CONFLICT(id) DO UPDATE SET enabled = ?2")
            try upsert.bind(1, id)
            try upsert.bind(2, enabled ? 1 : 0)
            try upsert.run()
        }
    }

    /// Keeps the receipt of a `/bindings` write on its own (one whose change is already kept, and
    /// would change nothing when made again).
    func saveAnswer(_ answer: AnswerRecord) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in try keep(answer, connection) }
    }

    /// Forgets a binding removed over HTTP, and its enabled flag; keeps the receipt of the request.
    func deleteBinding(id: String, answer: AnswerRecord? = nil) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in
            for sql in ["DELETE FROM bindings WHERE id = ?1", "DELETE FROM binding_states WHERE id = ?1"] {
                let delete = try connection.database.prepare(sql)
                try delete.bind(1, id)
                try delete.run()
            }
            try keep(answer, connection)
        }
    }

    /// Writes `answer` in the running transaction, and drops receipts past the idempotency window,
    /// beyond its capacity (fairly: ``trimFairly(_:capacity:_:)``), or beyond ``maxAnswerBytes``
    /// together (oldest first).
    private func keep(_ answer: AnswerRecord?, _ connection: Connection) throws(SQLiteError) {
        guard let answer else { return }
        let insert = try connection.database.prepare("INSERT INTO answers(created, receipt, scope) VALUES(?1, ?2, ?3)")
        try insert.bind(1, Int64(answer.created * 1000))
        try insert.bind(2, answer.receipt.encoded())
        try insert.bind(3, Self.scope(ofTag: answer.receipt.arrayValue?.first?.stringValue ?? ""))
        try insert.run()
        let retention = writer.receipts
        let expire = try connection.database.prepare("DELETE FROM answers WHERE created < ?1")
        try expire.bind(1, Int64((answer.created - Double(retention.window.components.seconds)) * 1000))
        try expire.run()
        try Self.trimFairly(.answers, capacity: retention.capacity, connection.database)
        let heavy = try connection.database.prepare(
            """
            DELETE FROM answers WHERE position <= (SELECT position FROM (SELECT position,
                sum(length(receipt)) OVER (ORDER BY position DESC) AS total FROM answers)
                WHERE total > ?1 ORDER BY position DESC LIMIT 1)
            """)
        try heavy.bind(1, Int64(Self.maxAnswerBytes))
        try heavy.run()
    }

    /// Most bytes the `/bindings` receipts of a data directory hold together (a receipt holds the
    /// binding's description, up to the body limit).
    static let maxAnswerBytes = 64 << 20
}
