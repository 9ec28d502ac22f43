import LiveBindEngine
extension StateDatabase {
    /// Everything a restarted server starts from.
    struct Contents: Sendable {
        /// The models as last committed, with their revisions.
        var models: [ModelSnapshot] = []
        /// The sequence of the last committed write: the next event id is one more.
        var lastSequence: UInt64 = 0
    }

    /// Reads the last checkpoint and replays the log after it.
    func load() throws(StateDatabaseError) -> Contents {
        let path = directory + "/" + Self.fileName
        return try withConnection { (connection) throws(StateDatabaseError) -> Contents in
            var models: [String: ModelSnapshot] = [:]
            var lastSequence: UInt64 = 0
            do {
                let rows = try connection.database.prepare("SELECT name, revision, document FROM models")
                while try rows.step() {
                    let name = rows.text(0)
                    guard let value = try? JSON(parsing: rows.bytes(2), maxDepth: StoreLimits.depthCeiling + 1),
                        case .object = value
                    else {
                        throw StateDatabaseError.notLiveBind(path: path, reason: "model '\(name)' does not hold a JSON object")
                    }
                    models[name] = ModelSnapshot(name: name, revision: UInt64(rows.int64(1)), value: value)
                }
                let meta = try connection.database.prepare("SELECT value FROM meta WHERE key = 'checkpoint'")
                if try meta.step() { lastSequence = UInt64(max(0, meta.int64(0))) }
                let log = try connection.database.prepare(
                    "SELECT sequence, model, revision, record FROM log WHERE sequence > ?1 ORDER BY sequence")
                try log.bind(1, Int64(lastSequence))
                var replayed = CheckpointProgress()
                while try log.step() {
                    let record = log.bytes(3)
                    let commit = try Commit(
                        record: record, sequence: UInt64(log.int64(0)), model: log.text(1),
                        revision: UInt64(log.int64(2)))
                    try Self.replay(commit, onto: &models)
                    replayed.add(commit, bytes: record.count)
                    lastSequence = commit.sequence
                }
                // The models these commits changed are in no checkpoint yet: the next one writes them.
                writer.resume(after: replayed)
            } catch let error as StateDatabaseError {
                throw error
            } catch let error as CommitRecordError {
                throw StateDatabaseError.notLiveBind(path: path, reason: error.description)
            } catch {
                throw StateDatabaseError.from(error, path: path)
            }
            return Contents(models: models.values.sorted { $0.name < $1.name }, lastSequence: lastSequence)
        }
    }

    /// Applies one commit of the log to the models of the checkpoint.
    private static func replay(_ commit: Commit, onto models: inout [String: ModelSnapshot]) throws(CommitRecordError) {
        switch commit.kind {
        case .snapshot(let value):
            models[commit.model] = ModelSnapshot(name: commit.model, revision: commit.revision, value: value)
        case .drop:
            models[commit.model] = nil
        case .changes(let changes):
            guard var model = models.removeValue(forKey: commit.model) else {
                throw CommitRecordError(sequence: commit.sequence, reason: "model '\(commit.model)' does not exist there")
            }
            for change in changes {
                do throws(StoreError) {
                    try model.value.replay(change)
                } catch {
                    throw CommitRecordError(sequence: commit.sequence, reason: error.description)
                }
            }
            model.revision = commit.revision
            models[commit.model] = model
        }
    }

    /// The receipts of idempotent writes made since `since` (seconds since 1970), oldest first; empty
    /// when they cannot be read (a retry then runs again).
    func receipts(since: Double) -> [CommitReceipt] {
        withConnection { connection in
            var receipts: [CommitReceipt] = []
            do {
                let rows = try connection.database.prepare(
                    "SELECT sequence, tag, model, revision, insert_index, created FROM receipts WHERE created >= ?1 ORDER BY sequence")
                try rows.bind(1, Int64(since * 1000))
                while try rows.step() {
                    let index = rows.int64(4)
                    receipts.append(
                        CommitReceipt(
                            tag: rows.text(1), sequence: UInt64(rows.int64(0)), model: rows.text(2),
                            revision: UInt64(rows.int64(3)), insertIndex: index >= 0 ? Int(index) : nil,
                            created: Double(rows.int64(5)) / 1000))
                }
            } catch {
                return []
            }
            return receipts
        }
    }

    /// The newest `retainedEvents` commits of the log, oldest first, for `Last-Event-ID` resumes. Empty
    /// when they cannot be read (clients then get `resync`, never a wrong event).
    func recentCommits() -> [Commit] {
        withConnection { connection in
            var commits: [Commit] = []
            do {
                let rows = try connection.database.prepare(
                    "SELECT sequence, model, revision, record FROM log ORDER BY sequence DESC LIMIT ?1")
                try rows.bind(1, Int64(retainedEvents))
                while try rows.step() {
                    commits.append(
                        try Commit(
                            record: rows.bytes(3), sequence: UInt64(rows.int64(0)), model: rows.text(1),
                            revision: UInt64(rows.int64(2))))
                }
            } catch {
                return []
            }
            return commits.reversed()
        }
    }
}
