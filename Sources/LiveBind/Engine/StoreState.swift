/// One model name's slot: its document and revision while the model exists, and its path observers
/// (which may be registered before the model is created and survive its drop).
struct ModelEntry {
    var exists: Bool
    var document: JSON
    var revision: UInt64
    var observers = ObserverTable()

    static var placeholder: ModelEntry { ModelEntry(exists: false, document: .null, revision: 0) }
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

    /// The slot of an existing model, or `modelNotFound`.
    func slot(of model: String) throws(StoreError) -> Dictionary<String, ModelEntry>.Index {
        guard let slot = entries.index(forKey: model), entries.values[slot].exists else { throw .modelNotFound(model) }
        return slot
    }

    /// The model's revision, checked against `ifRevision`.
    func revision(at slot: Dictionary<String, ModelEntry>.Index, ifRevision: UInt64?) throws(StoreError) -> UInt64 {
        let revision = entries.values[slot].revision
        if let expected = ifRevision, expected != revision {
            throw .revisionMismatch(expected: expected, actual: revision)
        }
        return revision
    }

    /// The revision of a model without an entry (0), checked against `ifRevision`.
    func revision(ofMissing ifRevision: UInt64?) throws(StoreError) -> UInt64 {
        if let expected = ifRevision, expected != 0 { throw .revisionMismatch(expected: expected, actual: 0) }
        return 0
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

    mutating func enqueue(_ change: Change, at slot: Dictionary<String, ModelEntry>.Index) {
        entries.values[slot].observers.enqueue(change, into: &queue)
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
