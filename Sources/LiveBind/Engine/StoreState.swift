/// One model name's slot: its document and revision while the model exists, and its path observers
/// (which may be registered before the model is created and survive its drop).
///
/// A class, so that the lock holder reaches the fields through one reference instead of copying the
/// entry out of the dictionary; it never leaves the store's lock.
final class ModelEntry {
    var exists = false
    var document: JSON = .null
    var revision: UInt64 = 0
    var observers = ObserverTable()
}

/// Everything the store's lock protects.
struct StoreState {
    var entries: [String: ModelEntry] = [:]
    var lastSequence: UInt64
    var nextObserverID: UInt64 = 0
    var commitObservers: [ObserverBox<Commit>] = []
    /// Deliveries waiting for the draining thread, in commit order.
    var queue: [Delivery] = []
    /// Emptied queue storage handed back by the last drainer, reused so that delivery does not allocate.
    var spareQueue: [Delivery] = []
    /// Whether some thread is delivering; at most one does at a time, which keeps commit order.
    var isDelivering = false
    var scratchChanges: [Change] = []
    var scratchUndo: [UndoStep] = []

    init(lastSequence: UInt64) {
        self.lastSequence = lastSequence
    }

    /// The entry of an existing model, or `modelNotFound`.
    func entry(of model: String) throws(StoreError) -> ModelEntry {
        guard let entry = entries[model], entry.exists else { throw .modelNotFound(model) }
        return entry
    }

    /// The entry of `model`, created (as a model that does not exist yet) when missing.
    mutating func makeEntry(for model: String) -> ModelEntry {
        if let entry = entries[model] { return entry }
        let entry = ModelEntry()
        entries[model] = entry
        return entry
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
                return ModelSnapshot(name: name, revision: entry.revision, value: entry.document)
            }
        }
        return entries.compactMap { name, entry in
            entry.exists ? ModelSnapshot(name: name, revision: entry.revision, value: entry.document) : nil
        }
    }

    mutating func enqueue(_ change: Change, for entry: ModelEntry) {
        entry.observers.enqueue(change, into: &queue)
    }

    mutating func enqueue(_ commit: Commit) {
        for box in commitObservers { queue.append(.commit(box, commit)) }
    }

    /// When deliveries are waiting and nobody delivers them, makes the caller the deliverer and hands it
    /// the waiting deliveries.
    mutating func claimDelivery() -> [Delivery]? {
        guard !queue.isEmpty, !isDelivering else { return nil }
        isDelivering = true
        var pending = spareQueue
        spareQueue = []
        swap(&pending, &queue)
        return pending
    }

    /// Called by the deliverer after running `finished` (now emptied): hands it the next deliveries, or
    /// ends delivery when none are waiting.
    mutating func nextDelivery(after finished: inout [Delivery]) -> Bool {
        if queue.isEmpty {
            isDelivering = false
            swap(&spareQueue, &finished)
            return false
        }
        swap(&finished, &queue)
        return true
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
