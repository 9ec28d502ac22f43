import Dispatch
import LiveBindEngine

extension StateDatabase {
    /// Everything a restarted server starts from.
    struct Contents: Sendable {
        /// The models as last committed, with their revisions.
        var models: [ModelSnapshot] = []
        /// The sequence of the last committed write: the next event id is one more.
        var lastSequence: UInt64 = 0
        /// The first event of the span in which presence rooms (EphemeralModels) were open when the
        /// last run ended (0: none were): clients that saw them must be told they are empty now.
        var roomsOpenSince: UInt64 = 0
    }

    /// Reads the last checkpoint and replays the log after it.
    func load() throws(StateDatabaseError) -> Contents {
        let path = directory + "/" + Self.fileName
        return try withConnection { (connection) throws(StateDatabaseError) -> Contents in
            var models: [String: ModelSnapshot] = [:]
            var lastSequence: UInt64 = 0
            var ephemeralThrough: UInt64 = 0
            var roomsOpenSince: UInt64 = 0
            do {
                let rows = try connection.database.prepare(
                    "SELECT name, revision, document, CASE WHEN size_revision = revision AND size >= length(document) THEN size END FROM models"
                )
                var batch = CheckpointBatch()
                func take(_ batch: inout CheckpointBatch) throws(StateDatabaseError) {
                    for (row, value) in zip(batch.rows, batch.parsed()) {
                        guard let value else {
                            throw .notLiveBind(path: path, reason: "model '\(row.name)' does not hold a JSON object")
                        }
                        models[row.name] = ModelSnapshot(name: row.name, revision: row.revision, value: value, countedSize: row.countedSize)
                    }
                    batch = CheckpointBatch()
                }
                while try rows.step() {
                    batch.append(
                        .init(
                            name: rows.text(0), revision: UInt64(rows.int64(1)), document: rows.bytes(2),
                            countedSize: rows.isNull(3) ? nil : Int(rows.int64(3))))
                    if batch.bytes >= CheckpointBatch.readAhead { try take(&batch) }
                }
                try take(&batch)
                let meta = try connection.database.prepare("SELECT value FROM meta WHERE key = 'checkpoint'")
                if try meta.step() { lastSequence = UInt64(max(0, meta.int64(0))) }
                // Event ids that presence rooms took after the last logged commit (EphemeralModels).
                let lastEvent = try connection.database.prepare("SELECT value FROM meta WHERE key = 'last_event'")
                if try lastEvent.step() { ephemeralThrough = UInt64(max(0, lastEvent.int64(0))) }
                let roomsOpen = try connection.database.prepare("SELECT value FROM meta WHERE key = 'rooms_open_since'")
                if try roomsOpen.step() { roomsOpenSince = UInt64(max(0, roomsOpen.int64(0))) }
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
                lastSequence = max(lastSequence, ephemeralThrough)
                // The models these commits changed are in no checkpoint yet: the next one writes them.
                writer.resume(after: replayed)
            } catch let error as StateDatabaseError {
                throw error
            } catch let error as CommitRecordError {
                throw StateDatabaseError.notLiveBind(path: path, reason: error.description)
            } catch {
                throw StateDatabaseError.from(error, path: path)
            }
            return Contents(
                models: models.values.sorted { $0.name < $1.name }, lastSequence: lastSequence, roomsOpenSince: roomsOpenSince)
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
            model.countedSize = nil  // measured again when the store is restored
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

    /// The newest commits of the log, oldest first, for `Last-Event-ID` resumes: at most
    /// `retainedEvents`, and no more than `bytes` as `size` counts them once the newest is read (the
    /// hub keeps no more: parsing the rest would only cost time and memory at start), except that
    /// every commit after `wantedAfter` is read (what a history that lags behind the log lacks).
    /// Empty when they cannot be read (clients then get `resync`, never a wrong event).
    ///
    /// A snapshot commit that made a model what it still is takes its value from `current` (the
    /// model's value when its revision is the one given), so that a whole model replaced by `PUT`
    /// is not held twice, parsed from the log a second time. Only a model's newest commit in the log
    /// can be what the model still is (the store was loaded from this log): an older one at the same
    /// revision is a model dropped and made again, which starts at revision 1 again, and its snapshot
    /// stays its own. `current` runs with the connection locked (the store's lock is taken inside).
    func recentCommits(
        bytes: Int = .max, size: (Commit) -> Int = { _ in 0 }, wantedAfter: UInt64? = nil,
        current: (_ model: String, _ revision: UInt64) -> JSON? = { _, _ in nil }
    ) -> [Commit] {
        withConnection { connection in
            var commits: [Commit] = []
            var read = 0
            var seen: Set<String> = []
            do {
                let rows = try connection.database.prepare(
                    "SELECT sequence, model, revision, record FROM log ORDER BY sequence DESC LIMIT ?1")
                try rows.bind(1, Int64(retainedEvents))
                while try rows.step() {
                    var commit = try Commit(
                        record: rows.bytes(3), sequence: UInt64(rows.int64(0)), model: rows.text(1),
                        revision: UInt64(rows.int64(2)))
                    if seen.insert(commit.model).inserted, case .snapshot = commit.kind,
                        let value = current(commit.model, commit.revision)
                    {
                        commit.kind = .snapshot(value)
                    }
                    let cost = size(commit)
                    let wanted = wantedAfter.map { commit.sequence > $0 } ?? false
                    if !commits.isEmpty, read + cost > bytes, !wanted { break }
                    read += cost
                    commits.append(commit)
                }
            } catch {
                return []
            }
            return commits.reversed()
        }
    }
}

/// Checkpointed models read but not yet parsed: a restart parses them on every core, a batch at a
/// time, since parsing is most of what it does (1 GB of JSON: 11 s on one core of this machine).
private struct CheckpointBatch {
    /// How many bytes of documents are read ahead of parsing.
    static let readAhead = 32 << 20

    struct Row: Sendable {
        let name: String
        let revision: UInt64
        let document: [UInt8]
        let countedSize: Int?
    }

    private(set) var rows: [Row] = []
    private(set) var bytes = 0

    mutating func append(_ row: Row) {
        rows.append(row)
        bytes += row.document.count
    }

    /// Each row's document parsed, in order; nil for one that is not a JSON object.
    func parsed() -> [JSON?] {
        let rows = rows
        // An OrderedMutex, not a Mutex: the parsers contend for it, and the thread sanitizer does not
        // see a contended Mutex's handoff (it reported the slots' writes as racing).
        let values = OrderedMutex([JSON?](repeating: nil, count: rows.count))
        DispatchQueue.concurrentPerform(iterations: rows.count) { index in
            guard let value = try? JSON(parsing: rows[index].document, maxDepth: StoreLimits.depthCeiling + 1),
                case .object = value
            else { return }
            values.withLock { $0[index] = value }
        }
        return values.withLock { $0 }
    }
}
