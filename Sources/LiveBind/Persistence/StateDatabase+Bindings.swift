extension StateDatabase {
    /// A binding made over HTTP, as it was posted (with its id filled in).
    struct StoredBinding: Sendable {
        var id: String
        var definition: JSON
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

    /// Keeps a binding made over HTTP.
    func saveBinding(id: String, definition: JSON) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in
            let insert = try connection.database.prepare(
                "INSERT INTO bindings(id, definition) VALUES(?1, ?2) ON CONFLICT(id) DO UPDATE SET definition = ?2")
            try insert.bind(1, id)
            try insert.bind(2, definition.encoded())
            try insert.run()
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

    /// Forgets a binding removed over HTTP, and its enabled flag.
    func deleteBinding(id: String) throws(StoreError) {
        try transaction { (connection) throws(SQLiteError) in
            for sql in ["DELETE FROM bindings WHERE id = ?1", "DELETE FROM binding_states WHERE id = ?1"] {
                let delete = try connection.database.prepare(sql)
                try delete.bind(1, id)
                try delete.run()
            }
        }
    }
}
