import Foundation
import Synchronization
import LiveBindEngine

/// The data directory's writer thread: group commit of the store's log.
///
/// Commits arrive in sequence order from writers holding the store's lock, and only wait in a queue.
/// The thread takes everything queued since its last sync, writes it in one transaction, syncs once,
/// and reports the batch durable to the store; writers that arrive during a sync share the next one.
/// After a failed transaction it reports the failure once and writes nothing more.
///
/// The writers a sync just answered usually write again a round trip later: left alone, they would
/// miss the sync that starts at once with the few commits that came during the last one, and writers
/// would settle into several small groups, each paying a sync. So the thread gathers before it takes
/// a batch, until as many commits wait as the last batch answered plus those that waited then, but
/// no longer after that report than twice what the last sync took (at least `shortestGather`, at most
/// `longestGather`): a lone writer, or one arriving at a quiet log, is written at once, and a batch
/// never waits more than about two syncs' time.
final class CommitWriter: @unchecked Sendable {
    // `@unchecked`: the queue's fields are only touched with the worker's lock held, the checkpoint's
    // only on the writer thread, and the connection only through its lock.
    /// `nil` once the thread ended: the file is closed (and unlocked) before `stop` returns.
    private let connection: OrderedMutex<StateDatabase.Connection?>
    let retainedEvents: Int
    let checkpointBytes: Int
    let receipts: StateDatabase.ReceiptRetention
    /// A test seam: called on the writer thread before each transaction.
    let beforeSync: (@Sendable () -> Void)?
    /// Transactions, commits and checkpoints written (for `/metrics`).
    let syncs = Atomic<Int>(0), commits = Atomic<Int>(0), checkpoints = Atomic<Int>(0)

    private let worker = WorkerThread(named: "lb-commit-log")
    private var queue: [Commit] = []
    private var spare: [Commit] = []
    private var appended: UInt64 = 0
    private var processed: UInt64 = 0
    /// While the thread gathers: how many queued commits end the gathering (0: not gathering).
    private var gatherTarget = 0
    private weak var store: Store?

    /// Writer thread only: what the next checkpoint must cover.
    private var checkpoint = CheckpointProgress()
    /// The presence rooms open as the written commits left them, from the first event they were open
    /// at (`since`), and what the file holds of it (nil: not written in this run yet).
    private var rooms = (open: Set<String>(), since: UInt64(0), saved: UInt64?.none)
    /// What the log held after the last checkpoint when the data directory was opened (see
    /// ``resume(after:)``); taken into `checkpoint` by the writer thread.
    private var replayed: CheckpointProgress?
    /// Writer thread only: how many commits the next batch may wait for, and until when.
    private var gather: (commits: Int, until: ContinuousClock.Instant)?
    /// The bounds of how long a batch may wait for writers to come back, whatever the last sync took.
    static let shortestGather = Duration.microseconds(500), longestGather = Duration.milliseconds(2)

    init(
        connection: sending StateDatabase.Connection, retainedEvents: Int, checkpointBytes: Int,
        receipts: StateDatabase.ReceiptRetention, beforeSync: (@Sendable () -> Void)?
    ) {
        self.receipts = receipts
        self.connection = OrderedMutex(connection)
        self.retainedEvents = retainedEvents
        self.checkpointBytes = checkpointBytes
        self.beforeSync = beforeSync
        worker.start { [self] in run() }
    }

    /// Tells the writer what the log held after the last checkpoint when the directory was opened
    /// (the commits a restart replayed): the next checkpoint must write those models too, or they
    /// would be lost with the log it trims. Called before the first commit is appended.
    func resume(after progress: CheckpointProgress) {
        worker.withLock { replayed = progress }
    }

    func attach(to store: Store) {
        worker.withLock { self.store = store }
    }

    /// Queues `commit`. Called with the store locked: takes only the queue's lock.
    func append(_ commit: Commit) {
        let wake = worker.withLock { () -> Bool in
            queue.append(commit)
            appended = commit.sequence
            return queue.count == 1 || queue.count == gatherTarget
        }
        // Signalled after unlocking, so that the woken thread does not block on the lock right away.
        if wake { worker.signal() }
    }

    /// Queues `commits` as one unit: the thread takes them in one batch.
    func append(contentsOf commits: [Commit]) {
        guard let last = commits.last else { return }
        let wake = worker.withLock { () -> Bool in
            let wasEmpty = queue.isEmpty
            queue += commits
            appended = last.sequence
            return wasEmpty || (gatherTarget > 0 && queue.count >= gatherTarget)
        }
        if wake { worker.signal() }
    }

    /// Returns once every commit queued so far is written (or failed) and reported to the store.
    func flush() {
        worker.withLock {
            let target = appended
            while processed < target && !worker.hasFinished { worker.wait() }
        }
    }

    /// Writes what is queued, closes the file, then ends the thread; returns once the file is closed.
    ///
    /// Called on the writer thread itself when the store's last reference went away in one of its
    /// calls to the store: it then writes what is left and closes the file right here, so that the
    /// file is unlocked when the store is gone, wherever that happened.
    func stop() {
        guard worker.isCurrent else { return worker.stop() }
        worker.stop()
        var rest: [Commit] = []
        worker.withLock { swap(&rest, &queue) }
        if !rest.isEmpty { _ = write(rest, checkpoint: nil) }
        connection.withLock { $0 = nil }
    }

    /// Whether the file is closed (``stop()`` was called and the thread wrote what was queued).
    var isClosed: Bool { worker.withLock { worker.hasFinished } }

    // MARK: The writer thread

    private func run() {
        while true {
            if let replayed = worker.withLock({ () -> CheckpointProgress? in
                defer { replayed = nil }; return replayed
            }) {
                checkpoint.merge(replayed)
            }
            // A checkpoint's cut is taken before the batch: every commit up to it is then either
            // written already or in the batch.
            let cut = checkpoint.bytes >= checkpointBytes ? currentStore()?.snapshot(models: nil) : nil
            guard var batch = nextBatch() else { return close() }
            let clock = ContinuousClock()
            let started = clock.now
            let outcome = write(batch, checkpoint: cut)
            let took = clock.now - started
            // Written, the commits carry their records on to the durable feed (the history reuses them).
            if case .written(let done) = outcome { report(outcome)?.run(done) } else { report(outcome)?.run(batch) }
            gather = finish(&batch, took: took, at: clock.now)
        }
    }

    /// Closes the file; the thread then finishes, which lets `flush` and `stop` return.
    private func close() {
        connection.withLock { $0 = nil }
    }

    /// Tells the store; the calls it returns run once this thread holds no reference to it.
    private func report(_ outcome: Outcome) -> DurableCalls? {
        guard let store = currentStore() else { return nil }
        switch outcome {
        case .written(let batch): return store.logDidPersist(batch)
        case .failed(let reason): return store.logDidFail(reason)
        }
    }

    private func currentStore() -> Store? {
        worker.withLock { store }
    }

    /// Everything queued, once something is and the gathering (see the type's notes) ended; `nil`
    /// when stopping with nothing queued.
    private func nextBatch() -> [Commit]? {
        worker.withLock { () -> [Commit]? in
            while queue.isEmpty && !worker.isStopping { worker.wait() }
            guard !queue.isEmpty else { return nil }
            if let gather, queue.count < gather.commits, !worker.isStopping, gather.until > .now {
                gatherTarget = gather.commits
                while queue.count < gather.commits && !worker.isStopping && worker.wait(until: gather.until) {}
                gatherTarget = 0
            }
            var batch = spare
            swap(&batch, &queue)
            spare = []
            return batch
        }
    }

    /// Marks `batch` processed, keeps its storage for the next one, and returns what the next batch
    /// may gather: the writers `batch` answered and those waiting now, for about twice what its sync `took`.
    private func finish(_ batch: inout [Commit], took: Duration, at now: ContinuousClock.Instant)
        -> (commits: Int, until: ContinuousClock.Instant)
    {
        let last = batch.last?.sequence ?? 0
        let answered = batch.count
        batch.removeAll(keepingCapacity: true)
        let waiting = worker.withLock { () -> Int in
            processed = max(processed, last)
            swap(&spare, &batch)
            worker.broadcast()
            return queue.count
        }
        return (answered + waiting, now + min(max(took * 2, Self.shortestGather), Self.longestGather))
    }

    private enum Outcome {
        case written([Commit])
        /// Nothing was written: this transaction failed, or an earlier one did (then `reason` says so).
        case failed(String)
    }

    /// Writes `batch` (and the checkpoint at `cut`, when given) in one transaction.
    private func write(_ batch: [Commit], checkpoint cut: (sequence: UInt64, models: [ModelSnapshot])?) -> Outcome {
        var progress = checkpoint
        var rooms = self.rooms
        for commit in batch where EphemeralModels.contains(commit.model) {
            let wasEmpty = rooms.open.isEmpty
            if case .drop = commit.kind { rooms.open.remove(commit.model) } else { rooms.open.insert(commit.model) }
            if wasEmpty, !rooms.open.isEmpty { rooms.since = commit.sequence }
            if rooms.open.isEmpty { rooms.since = 0 }
        }
        let now = Date().timeIntervalSince1970
        beforeSync?()
        var written = batch
        do throws(StoreError) {
            try transaction { (connection) throws(SQLiteError) in
                for (index, commit) in batch.enumerated() where EphemeralModels.logs(commit) {
                    let record = commit.encodedRecord()
                    written[index].record = record
                    try connection.appendCommit.bind(1, Int64(commit.sequence))
                    try connection.appendCommit.bind(2, commit.model)
                    try connection.appendCommit.bind(3, Int64(commit.revision))
                    try connection.appendCommit.bind(4, record)
                    try connection.appendCommit.run()
                    progress.add(commit, bytes: record.count)
                    if let receipt = CommitReceipt(commit, created: now) { try Self.write(receipt, connection: connection) }
                }
                // A presence room's event ids are taken for good, though the room is not kept.
                if let last = batch.last, !EphemeralModels.logs(last) {
                    try connection.saveLastEvent.bind(1, Int64(last.sequence))
                    try connection.saveLastEvent.run()
                }
                if rooms.saved != rooms.since {
                    try connection.saveRoomsOpenSince.bind(1, Int64(rooms.since))
                    try connection.saveRoomsOpenSince.run()
                    rooms.saved = rooms.since
                }
                if let cut {
                    try writeCheckpoint(
                        cut, progress: &progress, through: batch.last?.sequence ?? cut.sequence,
                        connection: connection)
                }
            }
        } catch {
            guard case .storageFailed(let reason) = error else { return .failed(error.description) }
            return .failed(reason)
        }
        checkpoint = progress
        self.rooms = rooms
        syncs.add(1, ordering: .relaxed)
        commits.add(batch.count, ordering: .relaxed)
        if cut != nil { checkpoints.add(1, ordering: .relaxed) }
        return .written(written)
    }

    /// The models changed since the last checkpoint, as `cut` has them (a model changed only after the
    /// cut is written as it was then, which the log after the cut completes); then the log up to the
    /// cut is dropped, except the newest `retainedEvents` commits.
    private func writeCheckpoint(
        _ cut: (sequence: UInt64, models: [ModelSnapshot]), progress: inout CheckpointProgress,
        through last: UInt64, connection: StateDatabase.Connection
    ) throws(SQLiteError) {
        let models = Dictionary(cut.models.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in progress.models {
            if let model = models[name] {
                try connection.upsertModel.bind(1, name)
                try connection.upsertModel.bind(2, Int64(model.revision))
                try connection.upsertModel.bind(3, model.value.encoded())
                try connection.upsertModel.bind(4, model.countedSize.map(Int64.init))
                try connection.upsertModel.run()
            } else {
                try connection.deleteModel.bind(1, name)
                try connection.deleteModel.run()
            }
        }
        try connection.saveCheckpoint.bind(1, Int64(cut.sequence))
        try connection.saveCheckpoint.run()
        let keepFrom = last > UInt64(retainedEvents) ? last - UInt64(retainedEvents) : 0
        try connection.trimLog.bind(1, Int64(min(cut.sequence, keepFrom)))
        try connection.trimLog.run()
        let window = Double(receipts.window.components.seconds)
        try connection.expireReceipts.bind(1, Int64((Date().timeIntervalSince1970 - window) * 1000))
        try connection.expireReceipts.run()
        try StateDatabase.trimFairly(.receipts, capacity: receipts.capacity, connection.database)
        progress.checkpointed(through: cut.sequence)
    }

    /// Writes `receipt` in the running transaction.
    private static func write(_ receipt: CommitReceipt, connection: StateDatabase.Connection) throws(SQLiteError) {
        try connection.appendReceipt.bind(1, Int64(receipt.sequence))
        try connection.appendReceipt.bind(2, receipt.tag)
        try connection.appendReceipt.bind(3, receipt.model)
        try connection.appendReceipt.bind(4, Int64(receipt.revision))
        try connection.appendReceipt.bind(5, Int64(receipt.insertIndex ?? -1))
        try connection.appendReceipt.bind(6, Int64(receipt.created * 1000))
        try connection.appendReceipt.bind(7, StateDatabase.scope(ofTag: receipt.tag))
        try connection.appendReceipt.run()
    }

    // MARK: The connection

    static let alreadyFailed = "an earlier write could not be made durable; restart the server"
    static let closedReason = "the data directory is closed (its server stopped)"

    /// Runs `body` with the connection locked. Only before ``stop()``: the file is closed after it.
    func withConnection<R: Sendable, E: Error>(_ body: (inout StateDatabase.Connection) throws(E) -> R) throws(E) -> R {
        try connection.withLock { (connection) throws(E) -> R in
            guard connection != nil else { preconditionFailure("the data directory was closed") }
            return try body(&connection!)
        }
    }

    /// Runs `body` in one write transaction and commits it (synced to disk before returning). A failure
    /// rolls back, throws, and marks the database failed: it takes no more writes. Throws once the
    /// file is closed.
    func transaction(_ body: (StateDatabase.Connection) throws(SQLiteError) -> Void) throws(StoreError) {
        try connection.withLock { (open) throws(StoreError) in
            guard let connection = open else { throw .storageFailed(Self.closedReason) }
            if connection.failure != nil { throw .storageFailed(Self.alreadyFailed) }
            do throws(SQLiteError) {
                try connection.begin.run()
                try body(connection)
                try connection.commit.run()
            } catch {
                open?.failure = error.description
                if connection.database.isInTransaction { try? connection.rollback.run() }
                throw .storageFailed(error.description)
            }
        }
    }
}

/// What the log holds since the last checkpoint: its bytes, and which models its commits changed.
struct CheckpointProgress {
    private(set) var bytes = 0
    private var changed: [String: UInt64] = [:]

    /// Counts a commit written to the log.
    mutating func add(_ commit: Commit, bytes count: Int) {
        bytes += count
        changed[commit.model] = commit.sequence
    }

    /// Counts what `other` counted too.
    mutating func merge(_ other: CheckpointProgress) {
        bytes += other.bytes
        changed.merge(other.changed) { max($0, $1) }
    }

    /// The models changed since the last checkpoint.
    var models: Dictionary<String, UInt64>.Keys { changed.keys }

    /// A checkpoint at `sequence` was written: only later commits are left to cover.
    mutating func checkpointed(through sequence: UInt64) {
        changed = changed.filter { $0.value > sequence }
        bytes = 0
    }
}
