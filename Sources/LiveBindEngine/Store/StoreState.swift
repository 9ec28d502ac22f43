/// One model name's slot: its document and revision while the model exists, and its path observers
/// (which may be registered before the model is created and survive its drop).
///
/// A class, so that the lock holder reaches the fields through one reference instead of copying the
/// entry out of the dictionary; it never leaves the store's lock.
final class ModelEntry {
    let name: String
    var exists = false
    // Only touched under the store's lock, so the runtime exclusivity checks would only cost time.
    @exclusivity(unchecked) var document: JSON = .null
    var revision: UInt64 = 0
    /// The document's counted size (see `JSON.measure`), kept up to date by every commit.
    @exclusivity(unchecked) var size = 0
    @exclusivity(unchecked) var observers = ObserverTable()
    /// With a commit log: the model as the durable commits left it, kept while some of its commits are
    /// not durable yet (what clients may see); `nil` when the document itself is durable.
    var durable: DurableView?
    /// With a commit log: the sequence of the model's latest commit.
    var lastCommit: UInt64 = 0

    init(name: String) {
        self.name = name
    }
}

/// Everything the store's lock protects.
struct StoreState {
    private(set) var entries: [String: ModelEntry] = [:]
    /// The entry found last: writes usually go to the same model again, and comparing its name is
    /// much cheaper than hashing it.
    private var lastEntry: ModelEntry?
    var lastSequence: UInt64
    var nextObserverID: UInt64 = 0
    var commitObservers: [ObserverBox] = []
    /// Deliveries waiting for the draining thread, in commit order.
    var queue = DeliveryBatch()
    /// The emptied batch handed back by the last deliverer, reused so that delivery does not allocate.
    var spareQueue = DeliveryBatch()
    /// The thread delivering (see `Store+Delivery.swift`), 0 while the relay is taking over.
    var deliverer: UInt = 0
    /// Whether a thread other than the deliverer queued calls since it took the queue.
    var othersWaiting = false
    /// The counted size of all models together.
    var totalSize = 0
    /// Each model's validation rules; most stores have none.
    var rules: [String: [ValidationRule]] = [:]
    var nextRuleID: UInt64 = 0
    var scratchChanges: [Change] = []
    var scratchUndo: [UndoStep] = []
    /// With a commit log: the sequence of the last durable commit, and what the clients may see.
    var durable: DurableState
    /// How many sequence numbers rollbacks gave back (see ``order(of:)``).
    var sequencesUndone: UInt64 = 0

    init(lastSequence: UInt64) {
        self.lastSequence = lastSequence
        durable = DurableState(sequence: lastSequence)
    }

    /// Where the commit numbered `sequence` now stands among every commit this store made, rolled
    /// back or not: its sequence plus the numbers rollbacks gave back. A rollback hands its sequence
    /// numbers to the next commits (a cluster's node undoes what another node's message came before);
    /// this order is never handed out twice, so a binding that reflects the store as of order `n`
    /// knows that a later commit is new even when its sequence is not.
    @inline(__always)
    func order(of sequence: UInt64) -> UInt64 { sequence &+ sequencesUndone }

    /// The result of a write that changed its model to `revision`, committed as `sequence` (the last
    /// commit's unless said), with the commit's order for the bindings.
    @inline(__always)
    func changedResult(sequence: UInt64? = nil, revision: UInt64, index: Int? = nil) -> WriteResult {
        var result = WriteResult(sequence: sequence ?? lastSequence, revision: revision, index: index, changed: true)
        result.order = order(of: result.sequence)
        return result
    }

    /// The entry of an existing model, or `modelNotFound`.
    @inline(__always)
    mutating func entry(of model: String) throws(StoreError) -> ModelEntry {
        guard let entry = lookUp(model), entry.exists else { throw .modelNotFound(model) }
        return entry
    }

    /// The entry of `model`, created (as a model that does not exist yet) when missing.
    mutating func makeEntry(for model: String) -> ModelEntry {
        if let entry = lookUp(model) { return entry }
        let entry = ModelEntry(name: model)
        entries[model] = entry
        lastEntry = entry
        return entry
    }

    /// The entry of `model` if there is one (existing or only observed).
    @inline(__always)
    mutating func lookUp(_ model: String) -> ModelEntry? {
        if let lastEntry, lastEntry.name == model { return lastEntry }
        guard let entry = entries[model] else { return nil }
        lastEntry = entry
        return entry
    }

    /// The validation rules of `model`, `nil` when it has none.
    @inline(__always)
    func rules(of model: String) -> [ValidationRule]? {
        rules.isEmpty ? nil : rules[model]
    }

    /// Forgets the entry of `model` (dropped, and no observer left).
    mutating func removeEntry(_ model: String) {
        if lastEntry?.name == model { lastEntry = nil }
        entries[model] = nil
    }

    /// The model's revision, checked against `ifRevision`.
    func revision(of entry: ModelEntry, ifRevision: UInt64?) throws(StoreError) -> UInt64 {
        let revision = entry.revision
        if let expected = ifRevision, expected != revision {
            throw .revisionMismatch(expected: expected, actual: revision)
        }
        return revision
    }

    /// The existing models as snapshots, in no particular order.
    func snapshots(_ names: [String]?) -> [ModelSnapshot] {
        if let names {
            return names.compactMap { name in
                guard let entry = entries[name], entry.exists else { return nil }
                return ModelSnapshot(name: name, revision: entry.revision, value: entry.document, countedSize: entry.size)
            }
        }
        return entries.compactMap { name, entry in
            entry.exists
                ? ModelSnapshot(name: name, revision: entry.revision, value: entry.document, countedSize: entry.size) : nil
        }
    }

    /// Queues `change`, made by the latest commit `depth` binding writes deep, for the entry's observers.
    mutating func enqueue(_ change: consuming Change, for entry: ModelEntry, depth: Int = 0) {
        entry.observers.enqueue(consume change, ChangeStamp(order: order(of: lastSequence), depth: depth), into: &queue)
    }

    /// Queues `commit`, made `depth` binding writes deep, for the store observers.
    mutating func enqueue(_ commit: consuming Commit, depth: Int = 0) {
        guard !commitObservers.isEmpty else { return }
        var commit = commit
        commit.depth = depth
        commit.order = order(of: commit.sequence)
        commit.origin = Store.commitOrigin
        queue.add(commit, for: commitObservers)
    }

    /// The waiting deliveries, for the thread that delivers them; the queue keeps the spare storage.
    mutating func takeQueue() -> DeliveryBatch {
        var pending = DeliveryBatch()
        swap(&pending, &spareQueue)
        swap(&pending, &queue)
        return pending
    }

    /// Keeps the emptied `finished` batch's storage for the next delivery.
    mutating func keepSpare(_ finished: inout DeliveryBatch) {
        swap(&spareQueue, &finished)
    }

    mutating func takeScratchChanges() -> [Change] {
        var taken: [Change] = []
        swap(&taken, &scratchChanges)
        return taken
    }

    mutating func takeScratchUndo() -> [UndoStep] {
        var taken: [UndoStep] = []
        swap(&taken, &scratchUndo)
        return taken
    }

    mutating func returnScratch(changes: inout [Change], undoLog: inout [UndoStep]) {
        changes.removeAll(keepingCapacity: true)
        undoLog.removeAll(keepingCapacity: true)
        swap(&changes, &scratchChanges)
        swap(&undoLog, &scratchUndo)
    }
}
