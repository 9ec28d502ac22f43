import DequeModule
#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

// The store's side of its commit log (see `CommitLog`): what the commit paths call with the lock held,
// what the log calls back on its own thread, and the durable view clients read.
extension Store {
    /// Called by each commit path with the lock held, before it changes `entry`: refuses the write when
    /// the log failed, and keeps the model as clients see it until the commit is durable.
    @inline(__always)
    func prepareLog(for entry: ModelEntry, _ state: inout StoreState) throws(StoreError) {
        guard log != nil else { return }
        if let refusal = state.durable.refusal { throw .storageFailed(refusal) }
        state.durable.holdView(of: entry)
    }

    /// Called by each commit path with the lock held, once `commit` is applied to `entry`. Without a
    /// log a commit is durable once made: the durable feed hears it here, under the lock, so in commit
    /// order whichever thread wrote it and with no hand-over to a delivering thread.
    @inline(__always)
    func appendToLog(_ commit: @autoclosure () -> Commit, of entry: ModelEntry, _ state: borrowing StoreState) {
        guard let log else {
            guard !state.durable.observers.isEmpty else { return }
            let commits = [commit()]
            for observer in state.durable.observers { observer.call(commits) }
            return
        }
        var commit = commit()
        entry.lastCommit = commit.sequence
        if commit.depth == 0, let tag = Self.commitTag, tag.take() { commit.tag = tag.text }
        Self.stamp(&commit)
        log.append(commit)
    }

    /// Called with the lock held by a write to several models, once their `commits` (consecutive) are
    /// applied: the log gets them as one unit, which it makes durable together. The write's tag, on
    /// the first commit, gets every model's result after a newline (``unitResults(_:)``), from which
    /// its answer can be made again.
    func appendUnitToLog(
        _ commits: [(Commit, ModelEntry)], _ state: borrowing StoreState,
        results: @autoclosure () -> [(model: String, result: WriteResult)]
    ) {
        guard !commits.isEmpty else { return }
        guard let log else {
            guard !state.durable.observers.isEmpty else { return }
            let made = commits.map(\.0)
            for observer in state.durable.observers { observer.call(made) }
            return
        }
        var unit: [Commit] = []
        unit.reserveCapacity(commits.count)
        for (commit, entry) in commits {
            var commit = commit
            entry.lastCommit = commit.sequence
            if unit.isEmpty, let tag = Self.commitTag, tag.take() { commit.tag = tag.text + "\n" + Self.unitResults(results()) }
            Self.stamp(&commit)
            unit.append(commit)
        }
        log.append(contentsOf: unit)
    }

    /// Runs `body` (one write on this thread); the first commit it makes that no binding made carries
    /// `tag` into the commit log, which keeps it in the same durable unit (an idempotency receipt: see
    /// `IdempotencyTable`). Without a log the tag goes nowhere.
    package func withCommitTag<R>(_ tag: String?, _ body: () throws -> R) rethrows -> R {
        guard let tag, log != nil else { return try body() }
        return try Self.$commitTag.withValue(CommitTag(tag), operation: body)
    }

    /// As ``withCommitTag(_:_:)``, and whether a commit carried the tag into the log (false: the write
    /// committed nothing, or there is no log or no tag).
    package func withCommitTagLogged<R>(_ tag: String?, _ body: () throws -> R) -> (result: Result<R, any Error>, logged: Bool) {
        guard let tag, log != nil else { return (Result { try body() }, false) }
        let commitTag = CommitTag(tag)
        let result = Self.$commitTag.withValue(commitTag) { Result { try body() } }
        return (result, !commitTag.take())
    }

    /// The tag of the write running on this thread, if any.
    @TaskLocal static var commitTag: CommitTag?

    /// Who the writes running on this thread are from (set by the server's router for each write
    /// request): every commit they make, with those their bindings derive, records it in the log.
    @TaskLocal package static var commitOrigin: CommitOrigin?

    /// Gives a commit entering the log its time and the running write's origin.
    @inline(__always)
    static func stamp(_ commit: inout Commit) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        commit.time = Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec / 1_000_000)
        commit.origin = commitOrigin
        if commit.depth > 0 { commit.origin?.carried = true }
    }

    /// A write to several models' results, as its tag carries them: `[[model, sequence, revision], …]`.
    static func unitResults(_ results: [(model: String, result: WriteResult)]) -> String {
        let list = results.map { JSON.array([.string($0.model), .int(Int($0.result.sequence)), .int(Int($0.result.revision))]) }
        return String(decoding: JSON.array(Deque(list)).encoded(), as: UTF8.self)
    }

    /// The results ``unitResults(_:)`` wrote, nil when `text` holds none.
    package static func unitResults(parsing text: Substring) -> [(model: String, result: WriteResult)]? {
        guard let list = (try? JSON(parsing: Array(text.utf8)))?.arrayValue else { return nil }
        var results: [(model: String, result: WriteResult)] = []
        for entry in list {
            guard let fields = entry.arrayValue, fields.count == 3, let model = fields[0].stringValue,
                case .int(let sequence) = fields[1], case .int(let revision) = fields[2], sequence >= 0, revision >= 0
            else { return nil }
            results.append((model, WriteResult(sequence: UInt64(sequence), revision: UInt64(revision), changed: true)))
        }
        return results
    }

    /// The log made `commits` durable (the next ones in sequence order): clients may see them now.
    /// Called on the log's thread, which then runs the returned calls (the waiting writes' and the
    /// durable feed's) once it holds no reference to the store: a write's waiter may let the store go.
    package func logDidPersist(_ commits: [Commit]) -> DurableCalls {
        guard let last = commits.last else { return DurableCalls() }
        let (ready, observers) = withState { state in
            for commit in commits {
                guard let entry = state.lookUp(commit.model), entry.durable != nil,
                    entry.lastCommit > commit.sequence
                else { continue }
                entry.durable!.apply(commit)
            }
            state.durable.sequence = last.sequence
            var emptied: [ModelEntry] = []
            state.durable.pendingEntries.removeAll { entry in
                guard entry.lastCommit <= last.sequence else { return false }
                entry.durable = nil
                if !entry.exists && entry.observers.isEmpty { emptied.append(entry) }
                return true
            }
            for entry in emptied where state.lookUp(entry.name) === entry { state.removeEntry(entry.name) }
            return (state.durable.takeWaiters(through: last.sequence), state.durable.observers.map(\.call))
        }
        return DurableCalls(waiters: ready, observers: observers)
    }

    /// The log could not make commits durable and takes no more: every waiting and later write fails
    /// with `reason`; clients keep seeing the durable state. Called on the log's thread, which runs
    /// the returned calls as for ``logDidPersist(_:)``.
    package func logDidFail(_ reason: String) -> DurableCalls {
        let waiting = withState { state in
            if state.durable.failure == nil { state.durable.failure = reason }
            defer { state.durable.waiters.removeAll() }
            return state.durable.waiters.map(\.waiter)
        }
        return DurableCalls(waiters: waiting, failure: .storageFailed(reason))
    }

    /// Refuses every later write with `reason`, as the log is about to close; what was committed before
    /// still becomes durable (``CommitLog/flush()`` waits for it).
    package func refuseWrites(_ reason: String) {
        withState { state in state.durable.closing = state.durable.closing ?? reason }
    }

    /// Calls `handler` once every commit up to `sequence` is durable: at once (on this thread) when it
    /// already is or the store keeps no log, else on the log's thread. It gets the error when the log
    /// failed first.
    func whenDurable(through sequence: UInt64, _ handler: @escaping @Sendable (StoreError?) -> Void) {
        guard log != nil else { return handler(nil) }
        whenDurable(through: sequence, tell: DurableCallback(handler))
    }

    /// Tells `waiter` once every commit up to `sequence` (`nil`: the last commit made so far) is
    /// durable, as ``whenDurable(through:_:)`` calls its handler.
    package func whenDurable(through sequence: UInt64? = nil, tell waiter: any DurableWaiter) {
        guard log != nil else { return waiter.durabilitySettled(nil) }
        let failure: StoreError?? = withState { state in
            let sequence = sequence ?? state.lastSequence
            if sequence <= state.durable.sequence { return .some(nil) }
            if let failure = state.durable.failure { return .some(.storageFailed(failure)) }
            state.durable.waiters.append((sequence, waiter))
            return nil
        }
        if let failure { waiter.durabilitySettled(failure) }
    }

    /// Returns once every commit up to `sequence` is on disk; throws when the data directory failed
    /// first. Returns at once for a store that keeps no data directory.
    ///
    /// With a data directory, a write returns once it is applied; the server answers an HTTP write
    /// only after this. Call it after a write from Swift that must survive a crash.
    public func waitUntilDurable(through sequence: UInt64) throws(StoreError) {
        guard log != nil else { return }
        let done = DispatchSemaphore(value: 0)
        let outcome = OrderedMutex<StoreError?>(nil)
        whenDurable(through: sequence) { error in
            outcome.withLock { $0 = error }
            done.signal()
        }
        done.wait()
        if let error = outcome.withLock({ $0 }) { throw error }
    }

    /// Calls `handler` with every durable batch of commits, in sequence order, on one thread at a time:
    /// the log's thread with a log; else the writing thread with each commit, with the store's lock held,
    /// so `handler` must be quick and must not call the store. (The server's SSE feed.)
    package func observeDurable(_ handler: @escaping @Sendable ([Commit]) -> Void) -> ObservationToken {
        let id = withState { state in
            state.nextObserverID += 1
            state.durable.observers.append((state.nextObserverID, handler))
            return state.nextObserverID
        }
        return ObservationToken { [weak self] in
            self?.withState { $0.durable.observers.removeAll { $0.id == id } }
        }
    }

    /// The sequence clients may see: the last durable commit's (the last commit's without a log).
    package var visibleSequence: UInt64 {
        withState { state in log == nil ? state.lastSequence : state.durable.sequence }
    }

    /// What clients may see: the models (sorted by name; `nil` means every model) and the sequence of
    /// the last durable commit, as ``snapshot(models:)`` gives for a store without a log.
    package func visibleSnapshot(models names: [String]?) -> (sequence: UInt64, models: [ModelSnapshot]) {
        guard log != nil else { return snapshot(models: names) }
        let (sequence, snapshots) = withState { state in (state.durable.sequence, state.visibleSnapshots(names)) }
        return (sequence, snapshots.sorted { $0.name < $1.name })
    }

    /// The name and revision of every model clients may see, sorted by name.
    package func visibleModelNames() -> [(name: String, revision: UInt64)] {
        guard log != nil else { return modelNames() }
        return visibleSnapshot(models: nil).models.map { (name: $0.name, revision: $0.revision) }
    }
}

extension StoreState {
    /// The models as the durable commits left them, in no particular order.
    func visibleSnapshots(_ names: [String]?) -> [ModelSnapshot] {
        func visible(_ name: String, _ entry: ModelEntry) -> ModelSnapshot? {
            if let view = entry.durable {
                return view.exists ? ModelSnapshot(name: name, revision: view.revision, value: view.document) : nil
            }
            return entry.exists ? ModelSnapshot(name: name, revision: entry.revision, value: entry.document) : nil
        }
        if let names { return names.compactMap { name in entries[name].flatMap { visible(name, $0) } } }
        return entries.compactMap { name, entry in visible(name, entry) }
    }

    /// The state of a store reopened from a log: the models with their revisions, no observers.
    init(restoring models: [ModelSnapshot], lastSequence: UInt64) {
        self.init(lastSequence: lastSequence)
        for model in models {
            let entry = makeEntry(for: model.name)
            entry.exists = true
            entry.document = model.value
            entry.revision = model.revision
            entry.size = model.countedSize ?? model.value.countedSize
            totalSize += entry.size + StoreLimits.modelOverhead
        }
    }
}

/// A tag for the first commit of a write (see ``Store/withCommitTag(_:_:)``), taken once.
final class CommitTag: Sendable {
    let text: String
    private let taken = Atomic<Bool>(false)

    init(_ text: String) {
        self.text = text
    }

    /// True the first time only.
    func take() -> Bool {
        !taken.exchange(true, ordering: .relaxed)
    }
}
