/// One model's document and revision.
struct ModelState {
    var value: JSON
    var revision: UInt64
}

/// Everything the store's lock protects.
struct StoreState {
    var models: [String: ModelState] = [:]
    var lastSequence: UInt64
    var nextObserverID: UInt64 = 0
    var observers: [String: ObserverTable] = [:]
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

    mutating func enqueue(_ change: Change, in model: String) {
        if let table = observers[model], !table.isEmpty { table.enqueue(change, into: &queue) }
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
