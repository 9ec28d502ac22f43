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
        let rows = try reader.prepare("SELECT sequence, record FROM commits WHERE time <= ?1 ORDER BY time DESC, sequence DESC LIMIT 1")
        try rows.bind(1, time)
        guard try rows.step() else { return meta.start }
        // A point inside a write to several models is the end of that write: its id.
        let sequence = UInt64(rows.int64(0))
        let commit = try Commit(record: rows.bytes(1), sequence: sequence, model: "", revision: 0)
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
    /// as they were after `after` (those that existed); throws past `limit` commits.
    func replay(_ models: [String], after: UInt64, through: UInt64, limit: Int)
        throws -> (snapshots: [ModelSnapshot], commits: [Commit]) {
        try withReader { reader in
            try read(reader) { () throws -> (snapshots: [ModelSnapshot], commits: [Commit]) in
                let meta = try Self.readMeta(reader)
                guard after >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
                var snapshots: [ModelSnapshot] = []
                var commits: [Commit] = []
                let rows = try reader.prepare("""
                    SELECT sequence, revision, record FROM commits WHERE model = ?1 AND sequence > ?2 AND sequence <= ?3
                    ORDER BY sequence LIMIT ?4
                    """)
                for model in models {
                    if let document = try Self.document(model, at: after, reader) {
                        snapshots.append(ModelSnapshot(name: model, revision: document.revision, value: document.value))
                    }
                    try rows.bind(1, model)
                    try rows.bind(2, Int64(after))
                    try rows.bind(3, Int64(min(through, meta.last)))
                    try rows.bind(4, Int64(limit - commits.count + 1))
                    while try rows.step() {
                        commits.append(try Commit(record: rows.bytes(2), sequence: UInt64(rows.int64(0)), model: model,
                                                  revision: UInt64(rows.int64(1))))
                        if commits.count > limit {
                            throw HistoryError.limit(flag: "history-max-points", limit: limit,
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
        throws -> (revision: UInt64, value: JSON)? {
        let base = try reader.prepare("""
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
        let commits = try reader.prepare("""
            SELECT sequence, revision, record FROM commits WHERE model = ?1 AND sequence > ?2 AND sequence <= ?3
            ORDER BY sequence
            """)
        try commits.bind(1, model)
        try commits.bind(2, from)
        try commits.bind(3, Int64(sequence))
        while try commits.step() {
            let commit = try Commit(record: commits.bytes(2), sequence: UInt64(commits.int64(0)), model: model,
                                    revision: UInt64(commits.int64(1)))
            switch commit.kind {
            case .snapshot(let value): current = (commit.revision, value)
            case .drop: current = nil
            case .changes(let changes):
                guard var document = current?.value else { throw HistoryError.unreadable("event \(commit.sequence) changes a missing model") }
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
    func series(_ model: String, _ path: Path, from: UInt64, to: UInt64, limits: Limits, origins: Bool) throws -> HistorySeries {
        try withReader { reader in
            try read(reader) { () throws -> HistorySeries in
                let meta = try Self.readMeta(reader)
                guard from >= meta.start else { throw HistoryError.before(oldest: "event \(meta.start)") }
                let to = min(to, meta.last)
                var tracker = try SeriesTracker(model: model, path: path, reader: reader, limits: limits)
                let base = try tracker.startAtCheckpoint(before: from)
                _ = try tracker.follow(after: base, through: from, emit: false, origins: false)
                var series = HistorySeries(start: tracker.value, through: to)
                guard to > from else { return series }
                series.points = try tracker.follow(after: from, through: to, emit: true, origins: origins)
                return series
            }
        }
    }
}

/// Follows one location along the history's changes (see ``HistoryDatabase/series(_:_:from:to:limits:origins:)``).
private struct SeriesTracker {
    let model: String
    let path: Path
    /// The location's root: `path` up to its first component that may be an array index.
    let root: Path
    let reader: SQLiteConnection
    let limits: HistoryDatabase.Limits
    /// The value at `root`, nil while it does not exist.
    var tree: JSON?
    /// Rows read so far, against `limits.maxScan`.
    var scanned = 0
    /// The last commit read whole, which the next rows often share.
    var commit: Commit?

    init(model: String, path: Path, reader: SQLiteConnection, limits: HistoryDatabase.Limits) throws {
        self.model = model
        self.path = path
        let cut = path.components.firstIndex { $0 == "-" || Path.arrayIndex($0) != nil } ?? path.components.count
        root = Path(Array(path.components[..<cut]))
        self.reader = reader
        self.limits = limits
    }

    /// The value at `path`, nil when it does not exist.
    var value: JSON? {
        guard let tree else { return nil }
        return try? tree.value(at: Path(Array(path.components[root.components.count...])))
    }

    /// Starts from the newest checkpoint at or before `sequence`; returns its event.
    mutating func startAtCheckpoint(before sequence: UInt64) throws -> UInt64 {
        let base = try reader.prepare("""
            SELECT sequence, document FROM checkpoints WHERE model = ?1 AND sequence <= ?2 ORDER BY sequence DESC LIMIT 1
            """)
        try base.bind(1, model)
        try base.bind(2, Int64(sequence))
        guard try base.step() else { return 0 }
        if !base.isNull(1) {
            let document = try JSON(parsing: base.bytes(1), maxDepth: StoreLimits.depthCeiling + 4)
            tree = try? document.value(at: root)
        }
        return UInt64(base.int64(0))
    }

    private struct Row {
        var path: String, sequence: UInt64, position: Int, time: Int64, number: Double?
    }

    /// Applies every change after `after` through `through` that reaches the root; with `emit`, returns
    /// a point for each commit that changed the value at `path`.
    mutating func follow(after: UInt64, through: UInt64, emit: Bool, origins: Bool) throws -> [HistorySeries.Point] {
        guard through > after else { return [] }
        let rows = try self.rows(after: after, through: through)
        var points: [HistorySeries.Point] = []
        var last = value
        let fast = root == path
        for (index, row) in rows.enumerated() {
            if fast, row.path == root.pointer, let number = row.number {
                tree = Self.json(number)
            } else {
                try apply(row)
            }
            // A commit's changes are applied whole before its point.
            guard emit, index + 1 == rows.count || rows[index + 1].sequence != row.sequence else { continue }
            let now = value
            guard now != last else { continue }
            last = now
            var point = HistorySeries.Point(sequence: row.sequence, time: row.time, value: now)
            if origins || row.number == nil || !fast {
                let made = try commit(row.sequence)
                point.sequence = made.eventID
                if origins { point.origin = made.origin }
            }
            points.append(point)
            if points.count > limits.maxPoints {
                throw HistoryError.limit(flag: "history-max-points", limit: limits.maxPoints,
                                         needed: "the range holds more than \(limits.maxPoints) changes of \(path.pointer)")
            }
        }
        return points
    }

    /// The rows at the root, above it and below it, in commit order.
    private mutating func rows(after: UInt64, through: UInt64) throws -> [Row] {
        var above = root
        var exact = [root.pointer]
        while !above.components.isEmpty {
            above = Path(Array(above.components.dropLast()))
            exact.append(above.pointer)
        }
        let list = exact.indices.map { "?\($0 + 5)" }.joined(separator: ", ")
        var rows = try read("""
            SELECT path, sequence, position, time, number FROM changes
            WHERE model = ?1 AND path IN (\(list)) AND sequence > ?2 AND sequence <= ?3
            ORDER BY sequence, position LIMIT ?4
            """, after: after, through: through, texts: exact)
        let prefix = root.pointer
        let below = try read("""
            SELECT path, sequence, position, time, number FROM changes
            WHERE model = ?1 AND path > ?5 AND path < ?6 AND sequence > ?2 AND sequence <= ?3
            ORDER BY sequence, position LIMIT ?4
            """, after: after, through: through, texts: [prefix + "/", prefix + "0"])
        if !below.isEmpty {
            rows += below
            rows.sort { ($0.sequence, $0.position) < ($1.sequence, $1.position) }
        }
        return rows
    }

    private mutating func read(_ sql: String, after: UInt64, through: UInt64, texts: [String]) throws -> [Row] {
        let statement = try reader.prepare(sql)
        try statement.bind(1, model)
        try statement.bind(2, Int64(after))
        try statement.bind(3, Int64(through))
        try statement.bind(4, Int64(limits.maxScan - scanned + 1))
        for (offset, text) in texts.enumerated() { try statement.bind(Int32(5 + offset), text) }
        var rows: [Row] = []
        while try statement.step() {
            scanned += 1
            if scanned > limits.maxScan {
                throw HistoryError.limit(flag: "history-max-scan", limit: limits.maxScan,
                                         needed: "the range holds more than \(limits.maxScan) changes at or around \(path.pointer)")
            }
            rows.append(Row(path: statement.text(0), sequence: UInt64(statement.int64(1)), position: Int(statement.int64(2)),
                            time: statement.int64(3), number: statement.isNull(4) ? nil : statement.double(4)))
        }
        return rows
    }

    /// The commit of event `sequence`, read whole.
    private mutating func commit(_ sequence: UInt64) throws -> Commit {
        if let commit, commit.sequence == sequence { return commit }
        let statement = try reader.prepare("SELECT revision, record FROM commits WHERE sequence = ?1")
        try statement.bind(1, Int64(sequence))
        guard try statement.step() else { throw HistoryError.unreadable("event \(sequence) is indexed but not kept") }
        let made = try Commit(record: statement.bytes(1), sequence: sequence, model: model, revision: UInt64(statement.int64(0)))
        commit = made
        return made
    }

    /// Applies the change `row` indexes to the tree at the root.
    private mutating func apply(_ row: Row) throws {
        let commit = try self.commit(row.sequence)
        switch commit.kind {
        case .snapshot(let document): tree = try? document.value(at: root)
        case .drop: tree = nil
        case .changes(let changes):
            guard changes.indices.contains(row.position) else { throw HistoryError.unreadable("event \(row.sequence) has no change \(row.position)") }
            apply(changes[row.position])
        }
    }

    private mutating func apply(_ change: Change) {
        let target = change.path
        if target.isPrefix(of: root) {
            switch change.kind {
            case .set:
                tree = try? change.value?.value(at: Path(Array(root.components[target.components.count...])))
            case .remove where change.index == nil:
                tree = nil
            default:
                // An array operation: on the root itself, or on an array the root cannot be inside of.
                guard target == root, tree != nil else { return }
                var relative = change
                relative.path = Path([])
                try? tree!.replay(relative)
            }
        } else if root.isPrefix(of: target), tree != nil {
            var relative = change
            relative.path = Path(Array(target.components[root.components.count...]))
            try? tree!.replay(relative)
        }
    }

    /// A number the index kept as a double, as JSON: whole numbers as integers.
    static func json(_ number: Double) -> JSON {
        if number.rounded() == number, abs(number) < 9_007_199_254_740_992 { return .int(Int(number)) }
        return .double(number)
    }
}
