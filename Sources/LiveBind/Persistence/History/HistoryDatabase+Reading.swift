import LiveBindEngine
extension HistoryDatabase {
    /// How much one query may read and answer (`--history-max-scan`, `--history-max-points`).
    struct Limits: Sendable {
        var maxScan = 1_000_000
        var maxPoints = 100_000
    }

    /// The first and last events the history covers, and when they were, once it has every commit
    /// the store shows (see ``catchUp(timeout:)``): call it first in every query.
    func bounds() throws -> Meta {
        catchUp()
        return try withReader { reader in try Self.readMeta(reader) }
    }

    /// The last event at or before `time` (milliseconds since 1970); throws when `time` is before the
    /// history's start.
    /// With `clamped`, a time before the start is the start (and the answer says when that was).
    func sequence(atOrBefore time: Int64, clamped: Bool = false) throws -> (sequence: UInt64, time: Int64) {
        try withReader { reader in
            let meta = try Self.readMeta(reader)
            if clamped && time < meta.startTime { return (meta.start, meta.startTime) }
            return (try Self.sequence(atOrBefore: time, reader), time)
        }
    }

    /// The event `sequence` stands for in the history: itself when it is after the start; throws
    /// when it is before.
    func checkedSequence(_ sequence: UInt64, clamped: Bool = false) throws -> UInt64 {
        try withReader { reader in
            let meta = try Self.readMeta(reader)
            if clamped && sequence < meta.start { return meta.start }
            guard sequence >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
            return min(sequence, meta.last)
        }
    }

    private static func sequence(atOrBefore time: Int64, _ reader: SQLiteConnection) throws -> UInt64 {
        let meta = try readMeta(reader)
        guard time >= meta.startTime else { throw HistoryError.before(oldest: HistoryTime.text(meta.startTime)) }
        // Times never decrease with sequences: bisect for the last commit at or before `time`.
        let next = try reader.prepare("SELECT sequence, time FROM commits WHERE sequence >= ?1 ORDER BY sequence LIMIT 1")
        var (low, high) = (meta.start, meta.last)
        while low < high {
            let middle = low + (high - low + 1) / 2
            try next.bind(1, Int64(middle))
            let found = try next.step() ? (UInt64(next.int64(0)), next.int64(1)) : nil
            next.reset()
            if let (sequence, at) = found, sequence <= high, at <= time { low = sequence } else { high = middle - 1 }
        }
        // A point inside a write to several models is the end of that write: its id.
        let record = try reader.prepare("SELECT record FROM commits WHERE sequence = ?1")
        try record.bind(1, Int64(low))
        guard try record.step() else { return low }
        let commit = try Commit(record: record.bytes(0), sequence: low, model: "", revision: 0)
        return max(meta.start, min(meta.last, commit.eventID))
    }

    /// When event `sequence` was recorded (the start's time for events before the first kept).
    func time(of sequence: UInt64) throws -> Int64 {
        try withReader { reader in
            let rows = try reader.prepare("SELECT time FROM commits WHERE sequence <= ?1 ORDER BY sequence DESC LIMIT 1")
            try rows.bind(1, Int64(sequence))
            if try rows.step() { return rows.int64(0) }
            return try Self.readMeta(reader).startTime
        }
    }

    /// `model` as it was after event `sequence`, with its revision; nil when it did not exist then.
    func document(_ model: String, at sequence: UInt64) throws -> (revision: UInt64, value: JSON)? {
        try withReader { reader in
            try read(reader) { () throws -> (revision: UInt64, value: JSON)? in
                let meta = try Self.readMeta(reader)
                guard sequence >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
                return try Self.document(model, at: sequence, reader)
            }
        }
    }

    /// The commits of `models` after event `after` through event `through`, in order, with the models
    /// as they were after `after` (those that existed; a name given twice counts once); throws past
    /// `limit` commits of those models, or when the range holds more than `scan` events of any model
    /// (each is read), or when the models as they were and the commits' records together pass
    /// `maxBytes` (`--history-max-bytes`), counted as each is read, before the next one is.
    func replay(_ models: [String], after: UInt64, through: UInt64, limit: Int, scan: Int, maxBytes: Int = .max)
        throws -> (snapshots: [ModelSnapshot], commits: [Commit])
    {
        try withReader { reader in
            try read(reader) { () throws -> (snapshots: [ModelSnapshot], commits: [Commit]) in
                let meta = try Self.readMeta(reader)
                guard after >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
                let events = min(through, meta.last) > after ? min(through, meta.last) - after : 0
                guard events <= UInt64(scan) else {
                    throw HistoryError.limit(
                        flag: "history-max-scan", limit: scan,
                        needed: "the history holds \(events) events since then, of every model")
                }
                var snapshots: [ModelSnapshot] = []
                var commits: [Commit] = []
                var bytes = 0
                let rows = try reader.prepare(
                    """
                    SELECT sequence, revision, record FROM commits WHERE model = ?1 AND sequence > ?2 AND sequence <= ?3
                    ORDER BY sequence LIMIT ?4
                    """)
                var seen = Set<String>()
                for model in models where seen.insert(model).inserted {
                    if let document = try Self.document(model, at: after, reader) {
                        bytes += document.value.countedSize
                        if bytes > maxBytes {
                            throw HistoryError.limit(
                                flag: "history-max-bytes", limit: maxBytes,
                                needed: "these models as they were then hold more than \(maxBytes) bytes")
                        }
                        snapshots.append(ModelSnapshot(name: model, revision: document.revision, value: document.value))
                    }
                    try rows.bind(1, model)
                    try rows.bind(2, Int64(after))
                    try rows.bind(3, Int64(min(through, meta.last)))
                    try rows.bind(4, Int64(limit - commits.count + 1))
                    while try rows.step() {
                        let record = rows.bytes(2)
                        bytes += record.count
                        if bytes > maxBytes {
                            throw HistoryError.limit(
                                flag: "history-max-bytes", limit: maxBytes,
                                needed: "the events of these models since then hold more than \(maxBytes) bytes")
                        }
                        commits.append(
                            try Commit(
                                record: record, sequence: UInt64(rows.int64(0)), model: model,
                                revision: UInt64(rows.int64(1))))
                        if commits.count > limit {
                            throw HistoryError.limit(
                                flag: "history-max-points", limit: limit,
                                needed: "the history holds more than \(limit) events of these models since then")
                        }
                    }
                    rows.reset()
                }
                return (snapshots, commits.sorted { $0.sequence < $1.sequence })
            }
        }
    }

    /// Runs `body` in one read transaction: everything it reads is of one moment.
    private func read<R>(_ reader: SQLiteConnection, _ body: () throws -> R) throws -> R {
        try reader.execute("BEGIN")
        defer { try? reader.execute("COMMIT") }
        return try body()
    }

    private static func document(_ model: String, at sequence: UInt64, _ reader: SQLiteConnection)
        throws -> (revision: UInt64, value: JSON)?
    {
        let base = try reader.prepare(
            """
            SELECT sequence, revision, document FROM checkpoints WHERE model = ?1 AND sequence <= ?2
            ORDER BY sequence DESC LIMIT 1
            """)
        try base.bind(1, model)
        try base.bind(2, Int64(sequence))
        var current: (revision: UInt64, value: JSON)?
        var from: Int64 = 0
        if try base.step() {
            from = base.int64(0)
            if !base.isNull(2) { current = (UInt64(base.int64(1)), try parse(base.bytes(2))) }
        }
        // Every checkpoint writes each model its commits touched since the one before: a model has no
        // commit between its own last row and the last mark, so only the commits after the mark are read
        // (at most a checkpoint's worth, however long ago the model last changed).
        let mark = try reader.prepare("SELECT coalesce(max(sequence), 0) FROM marks WHERE sequence <= ?1")
        try mark.bind(1, Int64(sequence))
        let lastMark = try mark.step() ? mark.int64(0) : 0
        let commits = try reader.prepare(
            """
            SELECT sequence, revision, record FROM commits WHERE model = ?1 AND sequence > ?2 AND sequence <= ?3
            ORDER BY sequence
            """)
        try commits.bind(1, model)
        try commits.bind(2, max(from, lastMark))
        try commits.bind(3, Int64(sequence))
        while try commits.step() {
            let commit = try Commit(
                record: commits.bytes(2), sequence: UInt64(commits.int64(0)), model: model,
                revision: UInt64(commits.int64(1)))
            switch commit.kind {
            case .snapshot(let value): current = (commit.revision, value)
            case .drop: current = nil
            case .changes(let changes):
                guard var document = current?.value else {
                    throw HistoryError.unreadable("event \(commit.sequence) changes a missing model")
                }
                for change in changes { try document.replay(change) }
                current = (commit.revision, document)
            }
        }
        return current
    }

    private static func parse(_ bytes: [UInt8]) throws -> JSON {
        try JSON(parsing: bytes, maxDepth: StoreLimits.depthCeiling + 4)
    }

    /// The values of `path` in `model` after event `from` through event `to`: its value after `from`,
    /// then a point for each event that changed it (with who made it when `origins`).
    ///
    /// Reads only the changes at the location, above it, and below its *root* — the path up to its
    /// first component that may be an array index (elements move when others are inserted or removed
    /// before them, so a path through an array is followed through the whole array).
    ///
    /// With `step` the points go straight into buckets `step` milliseconds wide (``HistorySeries/buckets``)
    /// and only ``Limits/maxScan`` bounds them; without, into ``HistorySeries/points``, at most
    /// ``Limits/maxPoints``.
    func series(
        _ model: String, _ path: Path, from: UInt64, to: UInt64, step: Int64? = nil, limits: Limits,
        origins: Bool
    ) throws -> HistorySeries {
        var series = HistorySeries(start: nil, through: 0)
        try self.series(model, path, from: from, to: to, countingPoints: step == nil, limits: limits, origins: origins) { start, through in
            series.start = start
            series.through = through
        } emit: { point in
            if let step { series.add(point, step: step) } else { series.points.append(point) }
        }
        return series
    }

    /// The same series, streamed: `begin` gets the value after `from` and the last event covered, then
    /// `emit` each point as it is read, so that no point is held once emitted (a point may be a whole
    /// document). With `countingPoints`, more than ``Limits/maxPoints`` points throw.
    func series(
        _ model: String, _ path: Path, from: UInt64, to: UInt64, countingPoints: Bool, limits: Limits, origins: Bool,
        begin: (_ start: JSON?, _ through: UInt64) throws -> Void,
        emit: (HistorySeries.Point) throws -> Void
    ) throws {
        try withReader { reader in
            try read(reader) { () throws -> Void in
                let meta = try Self.readMeta(reader)
                guard from >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
                let to = min(to, meta.last)
                var tracker = try SeriesTracker(model: model, path: path, reader: reader, limits: limits)
                let base = try tracker.startAtCheckpoint(before: from)
                try tracker.follow(after: base, through: from, origins: false) { _ in }
                try begin(tracker.value, to)
                guard to > from else { return }
                var points = 0
                try tracker.follow(after: from, through: to, origins: origins) { point in
                    points += 1
                    if countingPoints, points > limits.maxPoints {
                        throw HistoryError.limit(
                            flag: "history-max-points", limit: limits.maxPoints,
                            needed: "the range holds more than \(limits.maxPoints) changes of \(path.pointer)")
                    }
                    try emit(point)
                }
            }
        }
    }
}
