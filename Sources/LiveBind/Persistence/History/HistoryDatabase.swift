import Foundation
import Logging
import Synchronization
import LiveBindEngine

/// The data directory's `history.sqlite`: every commit of the last `--history`, indexed by the
/// locations it changed, with checkpoints of the models, so that a location's past values
/// (``series(_:_:from:to:limits:origins:)``) and a model's past documents (``document(_:at:)``) can be
/// read back without the store.
///
/// A file of its own, next to `livebind.sqlite` and written by a thread of its own: it takes commits
/// once they are durable (the store's durable feed), in order, and writes them in batches (WAL,
/// `synchronous=NORMAL`), so it adds no sync to a write. Readers use connections of their own and
/// never wait for the store or the writer. Should a crash leave it behind the commit log by more than
/// the log's retained commits, it starts again from the models as they are (the history before is
/// dropped, with a warning).
///
/// Every `checkpointBytes` of commits recorded, it writes the models changed since its last checkpoint
/// whole (`checkpoints`) and then drops what ``HistoryRetention`` no longer keeps: everything before
/// the newest checkpoint that is old enough (or past the size), so a document can always be made from
/// a checkpoint and the commits after it.
final class HistoryDatabase: @unchecked Sendable {
    // `@unchecked`: `queue`, `appended`, `recorded` and `store` are touched only with the worker's lock
    // held; `writer`, `touched`, `pendingCheckpoint` and `progress` only on the writer thread (and in
    // `init` and `start`, before it runs).
    static let fileName = "history.sqlite"
    static let formatVersion: Int64 = 1

    let path: String
    let retention: HistoryRetention
    let checkpointBytes: Int
    /// Connections for readers, each used by one reader at a time.
    private let readers: ReaderPool

    private let worker = WorkerThread(named: "lb-history")
    private var queue: [Commit] = []
    private var appended: UInt64 = 0
    private var recorded: UInt64 = 0
    /// Set by a query waiting in ``catchUp(timeout:)``: the writer stops gathering and writes now.
    private var hurry = false
    private weak var store: Store?
    /// How long the writer gathers commits before a transaction (a transaction a commit would cost
    /// more than the commit), unless a query waits or `gatherCount` are queued.
    static let gatherTime = Duration.milliseconds(20), gatherCount = 4096

    private let writer: Writer
    /// Writer thread only: the models recorded commits touched since the last checkpoint, each with
    /// its last such commit.
    private var touched: [String: UInt64] = [:]
    /// Writer thread only: the store's models taken for the next checkpoint, written once the history
    /// has every commit up to it.
    private var pendingCheckpoint: (sequence: UInt64, models: [ModelSnapshot])?
    /// Writer thread only: bytes recorded since the last checkpoint, and in all.
    private var progress = (sinceCheckpoint: Int64(0), total: Int64(0), lastTime: Int64(0))
    /// Commits and checkpoints written, for `/metrics` and tests.
    let commitsWritten = Atomic<Int>(0), checkpointsWritten = Atomic<Int>(0)
    /// Why the writer stopped recording (a failed transaction: the disk is full, say); queries then
    /// answer 503 until a restart starts the history again from the commit log.
    private let failure = OrderedMutex<String?>(nil)
    private let logger: Logger
    /// `history.sqlite-lock`, locked (`flock`) until ``stop()``: SQLite's own locks let two processes
    /// write one WAL file in turn, which two servers' histories must not. -1 once released.
    private let lockFile: OrderedMutex<Int32>

    /// Opens (creating when needed) `history.sqlite` in `directory`.
    init(
        directory: String, retention: HistoryRetention, checkpointBytes: Int, readers: Int = 2,
        logger: Logger = Logger(label: "livebind.history")
    ) throws(StateDatabaseError) {
        self.logger = logger
        path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        let lock = open(path + "-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            if lock >= 0 { close(lock) }
            throw .unusable(path: path, SQLiteError(code: 5, message: "locked by another process", context: "opening"))
        }
        lockFile = OrderedMutex(lock)
        self.retention = retention
        self.checkpointBytes = max(1, checkpointBytes)
        do {
            let database = try SQLiteConnection(path: path)
            try database.execute("PRAGMA busy_timeout = 2000")
            try database.useWriteAheadLog()
            try database.execute("PRAGMA synchronous = NORMAL")
            try Self.migrate(database, path: path)
            writer = try Writer(database)
            var pool: [SQLiteConnection] = []
            for _ in 0..<max(1, readers) {
                let reader = try SQLiteConnection(path: path)
                try reader.execute("PRAGMA busy_timeout = 2000; PRAGMA query_only = 1")
                pool.append(reader)
            }
            self.readers = ReaderPool(pool)
            let meta = try writer.readMeta()
            progress = (0, meta.bytes, meta.lastTime)
            touched = try writer.touchedSinceLastMark()
        } catch let error as StateDatabaseError {
            close(lock)
            throw error
        } catch {
            close(lock)
            throw StateDatabaseError.from(error, path: path)
        }
    }

    deinit { stop() }

    /// Writes what is queued, ends the writer thread and lets the file go (another server may open
    /// the directory then). Safe to call twice.
    func stop() {
        worker.stop()
        var rest: [Commit] = []
        worker.withLock { swap(&rest, &queue) }
        if !rest.isEmpty { record(rest) }
        lockFile.withLock { lock in
            if lock >= 0 { close(lock) }
            lock = -1
        }
    }

    // MARK: Starting

    /// The sequence of the last commit the file holds; nil when it holds none.
    var lastRecorded: UInt64? {
        guard let last = try? writer.readMeta().last, last > 0 else { return nil }
        return last
    }

    /// Joins the history to `store`'s commits from now on: the history must reach its last commit.
    /// `recent` are the newest commits of the store's log (oldest first), which fill what a crash left
    /// unwritten; when they do not reach back far enough, or the file is new, the history starts at
    /// the store's models as they are now. Returns what it did, for the log; ``enqueue(_:)`` takes
    /// every durable batch after it.
    func start(with store: Store, recent: [Commit]) -> String {
        let (sequence, models) = store.visibleSnapshot(models: nil)
        let last = (try? writer.readMeta().last) ?? 0
        let missing = recent.filter { $0.sequence > last && $0.sequence <= sequence }
        // `recent` is every commit from its first on: it has all the history lacks when it starts at
        // or before the history's next event (a cluster's sequences skip its binding changes).
        let reaches = last > 0 && last <= sequence && (last == sequence || (recent.first.map { $0.sequence <= last + 1 } ?? false))
        var outcome: String
        if reaches {
            if !missing.isEmpty { record(missing) }
            outcome = "history from \(HistoryTime.text((try? writer.readMeta().startTime) ?? 0))"
        } else {
            if last > 0 {
                outcome = "history restarted at event \(sequence): the file was behind the commit log"
            } else {
                outcome = "history starts now"
            }
            do throws(SQLiteError) {
                try writer.transaction { () throws(SQLiteError) in
                    try writer.database.execute("DELETE FROM commits; DELETE FROM changes; DELETE FROM checkpoints; DELETE FROM marks;")
                    let now = Self.now()
                    for model in models where !EphemeralModels.contains(model.name) {
                        try writer.saveCheckpoint(model.name, sequence: sequence, revision: model.revision, document: model.value.encoded())
                    }
                    try writer.saveMark(sequence: sequence, time: now, bytes: 0)
                    try writer.saveMeta(start: sequence, startTime: now, last: sequence, lastTime: now, bytes: 0)
                }
                touched = [:]
                progress = (0, 0, Self.now())
            } catch {
                outcome = "history could not start: \(error)"
            }
        }
        worker.withLock {
            self.store = store
            recorded = sequence
            appended = sequence
        }
        _ = worker.start { [self] in run() }
        return outcome
    }

    // MARK: Recording

    /// Takes a durable batch of commits (the store's durable feed): queued for the writer thread.
    func enqueue(_ commits: [Commit]) {
        guard let last = commits.last else { return }
        let wake = worker.withLock { () -> Bool in
            guard last.sequence > appended else { return false }
            // Durable batches follow each other: only the first after `start` may repeat commits.
            if commits[0].sequence > appended { queue += commits } else { queue += commits.filter { $0.sequence > appended } }
            appended = last.sequence
            return true
        }
        // Every waiter: queries waiting in `catchUp` share the condition with the writer thread.
        if wake { worker.broadcast() }
    }

    /// Returns once every commit the store made visible so far is recorded (or after `timeout`): a
    /// query right after a write sees it. A cluster's store also counts sequences that are no commit
    /// (binding changes): the wait also ends once the writer had nothing to do for 100 ms.
    func catchUp(timeout: Duration = .seconds(2)) {
        guard let target = worker.withLock({ store })?.visibleSequence else { return }
        let deadline = ContinuousClock.now + timeout
        var idle = 0
        worker.withLock {
            hurry = recorded < target
            worker.broadcast()
            defer { hurry = false }
            while recorded < target && !worker.hasFinished && idle < 2 {
                let slice = min(deadline, ContinuousClock.now + .milliseconds(50))
                if !worker.wait(until: slice) {
                    guard ContinuousClock.now < deadline else { return }
                    idle = queue.isEmpty && recorded == appended ? idle + 1 : 0
                }
            }
        }
    }

    /// Returns once every commit queued so far is recorded.
    func flush() {
        worker.withLock {
            let target = appended
            while recorded < target && !worker.hasFinished { worker.wait() }
        }
    }

    private func run() {
        while true {
            let batch = worker.withLock { () -> [Commit]? in
                while queue.isEmpty && !worker.isStopping { worker.wait() }
                guard !queue.isEmpty else { return nil }
                let until = ContinuousClock.now + Self.gatherTime
                while queue.count < Self.gatherCount && !hurry && !worker.isStopping && worker.wait(until: until) {}
                defer { queue = [] }
                return queue
            }
            guard let batch else { return }
            record(batch)
            worker.withLock {
                recorded = max(recorded, batch.last!.sequence)
                worker.broadcast()
            }
        }
    }

    /// Writes `commits` in one transaction, then a checkpoint and the retention's trim when due.
    private func record(_ commits: [Commit]) {
        guard failure.withLock({ $0 }) == nil else { return }
        var progress = self.progress
        do throws(SQLiteError) {
            try writer.transaction { () throws(SQLiteError) in
                // Presence rooms have no history (EphemeralModels); the sequence they took still counts.
                for commit in commits where !EphemeralModels.contains(commit.model) {
                    let time = max(commit.time > 0 ? commit.time : Self.now(), progress.lastTime)
                    progress.lastTime = time
                    let record = commit.record ?? commit.encodedRecord()
                    try writer.appendCommit(commit, time: time, record: record)
                    var rows = 1
                    switch commit.kind {
                    case .changes(let changes):
                        for (position, change) in changes.enumerated() {
                            // The fast path of a series reads a point's id from the row: only for a
                            // commit whose event id is its own sequence (not inside a write to several models).
                            var number: Double?
                            if change.kind == .set, commit.unitTail == 0 {
                                switch change.value {
                                case .int(let value): number = Double(value)
                                case .double(let value): number = value
                                default: break
                                }
                            }
                            try writer.appendChange(
                                commit.model, path: change.path.pointer, sequence: commit.sequence,
                                position: position, time: time, number: number)
                        }
                        rows += changes.count
                    case .snapshot, .drop:
                        try writer.appendChange(
                            commit.model, path: "", sequence: commit.sequence, position: 0, time: time,
                            number: nil)
                    }
                    let bytes = Int64(record.count + 64 * rows)
                    progress.sinceCheckpoint += bytes
                    progress.total += bytes
                }
                try writer.saveLast(commits.last!.sequence, time: progress.lastTime, bytes: progress.total)
            }
        } catch {
            // A batch missing would make every later answer wrong: recording stops, queries get 503.
            let reason = "history could not record events \(commits.first!.sequence)…\(commits.last!.sequence): \(error)"
            failure.withLock { $0 = $0 ?? reason }
            logger.error("\(reason); history queries fail until a restart")
            return
        }
        self.progress = progress
        for commit in commits where !EphemeralModels.contains(commit.model) { touched[commit.model] = commit.sequence }
        commitsWritten.add(commits.count, ordering: .relaxed)
        if progress.sinceCheckpoint >= Int64(checkpointBytes) { takeCheckpoint() }
        if let pending = pendingCheckpoint, commits.last!.sequence >= pending.sequence { writeCheckpoint() }
    }

    /// Takes the store's models for a checkpoint at its visible event, written once every commit up
    /// to it is recorded (see ``writeCheckpoint()``).
    private func takeCheckpoint() {
        guard pendingCheckpoint == nil, let store = worker.withLock({ self.store }) else { return }
        pendingCheckpoint = store.visibleSnapshot(models: nil)
    }

    /// Writes the models the commits recorded since the last checkpoint touched, as the pending
    /// checkpoint has them (a model gone: a row without a document), marks the point, and trims what
    /// the retention no longer keeps. Models no commit touched keep their last row.
    private func writeCheckpoint() {
        guard let (sequence, models) = pendingCheckpoint else { return }
        pendingCheckpoint = nil
        let documents = Dictionary(models.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let now = Self.now()
        var total = progress.total
        do throws(SQLiteError) {
            try writer.transaction { () throws(SQLiteError) in
                for name in touched.keys {
                    let model = documents[name]
                    try writer.saveCheckpoint(
                        name, sequence: sequence, revision: model?.revision ?? 0,
                        document: model?.value.encoded())
                    total += Int64(model?.value.countedSize ?? 0)
                }
                try writer.saveMark(sequence: sequence, time: now, bytes: total)
                try writer.trim(keeping: retention, now: now, total: total)
            }
        } catch {
            logger.warning("history could not write a checkpoint (it tries again at the next one): \(error)")
            return
        }
        progress.total = total
        touched = touched.filter { $0.value > sequence }
        progress.sinceCheckpoint = 0
        checkpointsWritten.add(1, ordering: .relaxed)
    }

    // MARK: Reading

    /// Runs `body` with a reader connection of its own; throws ``HistoryError/busy`` when every one is in use.
    func withReader<R>(_ body: (SQLiteConnection) throws -> R) throws -> R {
        if let reason = failure.withLock({ $0 }) { throw HistoryError.unreadable(reason) }
        guard let reader = readers.take() else { throw HistoryError.busy }
        defer { readers.give(reader) }
        return try body(reader)
    }

    /// Milliseconds since 1970, now.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// Connections readers borrow, one reader each at a time.
private final class ReaderPool: @unchecked Sendable {
    // `@unchecked`: `free` is only touched with `lock` held; a connection is used by one thread at a time.
    private var free: [SQLiteConnection]
    private let lock = NSLock()

    init(_ connections: [SQLiteConnection]) { free = connections }

    func take() -> SQLiteConnection? { lock.withLock { free.popLast() } }

    func give(_ connection: SQLiteConnection) { lock.withLock { free.append(connection) } }
}
