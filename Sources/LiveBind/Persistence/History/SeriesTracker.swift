import LiveBindEngine
/// Follows one location along the history's changes (see ``HistoryDatabase/series(_:_:from:to:step:limits:origins:)``).
///
/// The location's *root* is its path up to the first component that may be an array index: elements
/// move when others are inserted or removed before them, so a path through an array is followed
/// through the whole array. The tracker keeps the value at the root and reads three kinds of rows of
/// `changes`: at the root (one ordered index range, streamed: most rows of a series), above it and
/// below it (few, read whole and merged in).
struct SeriesTracker {
    let model: String
    let path: Path
    let root: Path
    private let rootPointer: String
    /// `path` below the root.
    private let inside: Path
    let reader: SQLiteConnection
    let limits: HistoryDatabase.Limits
    /// The value at `root`, nil while it does not exist.
    private(set) var tree: JSON?
    /// Rows read so far, against `limits.maxScan`.
    private var scanned = 0
    /// The last commit read whole, which the next rows often share.
    private var commit: Commit?

    init(model: String, path: Path, reader: SQLiteConnection, limits: HistoryDatabase.Limits) throws {
        self.model = model
        self.path = path
        let cut = path.components.firstIndex { $0 == "-" || Path.arrayIndex($0) != nil } ?? path.components.count
        root = Path(Array(path.components[..<cut]))
        rootPointer = root.pointer
        inside = Path(Array(path.components[cut...]))
        self.reader = reader
        self.limits = limits
    }

    /// The value at `path`, nil when it does not exist.
    var value: JSON? {
        guard let tree else { return nil }
        return inside.components.isEmpty ? tree : try? tree.value(at: inside)
    }

    /// Starts from the newest checkpoint at or before `sequence`; returns its event.
    mutating func startAtCheckpoint(before sequence: UInt64) throws -> UInt64 {
        let base = try reader.prepare(
            """
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

    /// One row of `changes`.
    private struct Row {
        var atRoot: Bool, sequence: UInt64, position: Int, time: Int64, number: Double?
        func precedes(_ other: Row) -> Bool { (sequence, position) < (other.sequence, other.position) }
    }

    /// Applies every change after `after` through `through` that reaches the root, and calls `emit`
    /// with a point for each commit that changed the value at `path` (its changes applied whole).
    mutating func follow(after: UInt64, through: UInt64, origins: Bool, emit: (HistorySeries.Point) throws -> Void) throws {
        guard through > after else { return }
        var extra = try aroundRoot(after: after, through: through)[...]
        let atRoot = try reader.prepare(
            """
            SELECT sequence, position, time, number FROM changes
            WHERE model = ?1 AND path = ?2 AND sequence > ?3 AND sequence <= ?4 ORDER BY sequence, position
            """)
        try atRoot.bind(1, model)
        try atRoot.bind(2, rootPointer)
        try atRoot.bind(3, Int64(after))
        try atRoot.bind(4, Int64(through))
        var last = value
        var open: Row?  // the last row of the commit being applied
        let fast = inside.components.isEmpty
        func close(_ row: Row, tracker: inout SeriesTracker) throws {
            let now = tracker.value
            guard now != last else { return }
            last = now
            var point = HistorySeries.Point(sequence: row.sequence, time: row.time, value: now)
            if origins || row.number == nil || !fast || !row.atRoot {
                let made = try tracker.commit(row.sequence)
                point.sequence = made.eventID
                if origins { point.origin = made.origin }
            }
            try emit(point)
        }
        func take(_ row: Row, tracker: inout SeriesTracker) throws {
            if let previous = open, previous.sequence != row.sequence { try close(previous, tracker: &tracker) }
            if fast, row.atRoot, let number = row.number {
                tracker.tree = Self.json(number)
            } else {
                try tracker.apply(row)
            }
            open = row
        }
        while try atRoot.step() {
            try count()
            let row = Row(
                atRoot: true, sequence: UInt64(atRoot.int64(0)), position: Int(atRoot.int64(1)),
                time: atRoot.int64(2), number: atRoot.isNull(3) ? nil : atRoot.double(3))
            while let next = extra.first, next.precedes(row) {
                try take(next, tracker: &self)
                extra.removeFirst()
            }
            try take(row, tracker: &self)
        }
        for row in extra { try take(row, tracker: &self) }
        if let open { try close(open, tracker: &self) }
    }

    /// The rows above the root and below it, in commit order.
    private mutating func aroundRoot(after: UInt64, through: UInt64) throws -> [Row] {
        var rows: [Row] = []
        var above = root
        while !above.components.isEmpty {
            above = Path(Array(above.components.dropLast()))
            rows += try read("path = ?5", [above.pointer], after: after, through: through)
        }
        let below = try read("path > ?5 AND path < ?6", [rootPointer + "/", rootPointer + "0"], after: after, through: through)
        if rows.isEmpty { return below }
        rows += below
        rows.sort { $0.precedes($1) }
        return rows
    }

    private mutating func read(_ condition: String, _ texts: [String], after: UInt64, through: UInt64) throws -> [Row] {
        let statement = try reader.prepare(
            """
            SELECT sequence, position, time, number FROM changes
            WHERE model = ?1 AND \(condition) AND sequence > ?2 AND sequence <= ?3 ORDER BY sequence, position LIMIT ?4
            """)
        try statement.bind(1, model)
        try statement.bind(2, Int64(after))
        try statement.bind(3, Int64(through))
        try statement.bind(4, Int64(limits.maxScan - scanned + 1))
        for (offset, text) in texts.enumerated() { try statement.bind(Int32(5 + offset), text) }
        var rows: [Row] = []
        while try statement.step() {
            try count()
            rows.append(
                Row(
                    atRoot: false, sequence: UInt64(statement.int64(0)), position: Int(statement.int64(1)),
                    time: statement.int64(2), number: statement.isNull(3) ? nil : statement.double(3)))
        }
        return rows
    }

    private mutating func count() throws {
        scanned += 1
        if scanned > limits.maxScan {
            throw HistoryError.limit(
                flag: "history-max-scan", limit: limits.maxScan,
                needed: "the range holds more than \(limits.maxScan) changes at or around \(path.pointer)")
        }
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
            guard changes.indices.contains(row.position) else {
                throw HistoryError.unreadable("event \(row.sequence) has no change \(row.position)")
            }
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
