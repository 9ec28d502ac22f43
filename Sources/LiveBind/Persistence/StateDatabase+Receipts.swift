import LiveBindEngine
extension StateDatabase {
    /// The two tables of idempotency receipts, each with its order column.
    enum ReceiptTable: String {
        /// Receipts of commits (`CommitReceipt`), in sequence order.
        case receipts
        /// Receipts that hold their answer (`AnswerRecord`), in the order they were kept.
        case answers

        var order: String { self == .receipts ? "sequence" : "position" }
    }

    /// Whose receipt a tag is: the credential part of its key (the server's tag is
    /// `<fingerprint> <flags> <created ms> <credential>:<key>`); empty when the tag is not one.
    static func scope(ofTag tag: String) -> String {
        let head = tag.prefix { $0 != "\n" }
        let parts = head.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return "" }
        return String(parts[3].prefix { $0 != ":" })
    }

    /// Adds the `scope` column (and its index) to receipt tables made before it, filled from the tags.
    /// Runs in the migration's transaction.
    static func addScopes(_ database: SQLiteConnection) throws(SQLiteError) {
        for table in [ReceiptTable.receipts, .answers] {
            let columns = try database.prepare("SELECT count(*) FROM pragma_table_info('\(table.rawValue)') WHERE name = 'scope'")
            guard try columns.step(), columns.int64(0) == 0 else { continue }
            try database.execute("ALTER TABLE \(table.rawValue) ADD COLUMN scope TEXT NOT NULL DEFAULT ''")
            let column = table == .receipts ? "tag" : "receipt"
            let rows = try database.prepare("SELECT \(table.order), \(column) FROM \(table.rawValue)")
            let update = try database.prepare("UPDATE \(table.rawValue) SET scope = ?2 WHERE \(table.order) = ?1")
            while try rows.step() {
                let tag = table == .receipts ? rows.text(1) : ((try? JSON(parsing: rows.bytes(1)))?.arrayValue?.first?.stringValue ?? "")
                try update.bind(1, rows.int64(0))
                try update.bind(2, scope(ofTag: tag))
                try update.run()
            }
        }
        try database.execute(
            """
            CREATE INDEX IF NOT EXISTS receipts_scope ON receipts(scope, sequence);
            CREATE INDEX IF NOT EXISTS answers_scope ON answers(scope, position);
            """)
    }

    /// Drops receipts of `table` past `capacity`, as the server's table of answers does in memory
    /// (`IdempotencyTable`): the credential holding the most, while it holds more than its share (an
    /// eighth of `capacity`), loses its own oldest first; then the oldest of anyone go. So one client's
    /// keyed writes cannot push another's receipts out of a data directory either, and a restarted
    /// server learns the same answers it held. Takes a look at the index while the receipts span
    /// no more than `capacity` positions, else a count and a few statements per credential over its share (at most nine),
    /// each a scan of the table.
    static func trimFairly(_ table: ReceiptTable, capacity: Int, _ database: SQLiteConnection) throws(SQLiteError) {
        let share = Int64(max(1, capacity / 8))
        // The span of the order column bounds the count from above, from the index alone: most calls end here.
        let span = try database.prepare(
            "SELECT coalesce(max(\(table.order)) - min(\(table.order)) + 1, 0) FROM \(table.rawValue)")
        guard try span.step(), span.int64(0) > Int64(capacity) else { return }
        span.reset()
        let count = try database.prepare("SELECT count(*) FROM \(table.rawValue)")
        guard try count.step() else { return }
        var excess = count.int64(0) - Int64(capacity)
        count.reset()
        guard excess > 0 else { return }
        let largest = try database.prepare(
            "SELECT scope, count(*) AS held FROM \(table.rawValue) GROUP BY scope ORDER BY held DESC LIMIT 1")
        let dropOwn = try database.prepare(
            """
            DELETE FROM \(table.rawValue) WHERE \(table.order) IN
                (SELECT \(table.order) FROM \(table.rawValue) WHERE scope = ?1 ORDER BY \(table.order) LIMIT ?2)
            """)
        for _ in 0..<16 where excess > 0 {
            guard try largest.step() else { break }
            let scope = largest.text(0)
            let held = largest.int64(1)
            largest.reset()
            guard held > share else { break }
            let dropped = min(held - share, excess)
            try dropOwn.bind(1, scope)
            try dropOwn.bind(2, dropped)
            try dropOwn.run()
            excess -= dropped
        }
        guard excess > 0 else { return }
        let dropOldest = try database.prepare(
            """
            DELETE FROM \(table.rawValue) WHERE \(table.order) IN
                (SELECT \(table.order) FROM \(table.rawValue) ORDER BY \(table.order) LIMIT ?1)
            """)
        try dropOldest.bind(1, excess)
        try dropOldest.run()
    }
}
