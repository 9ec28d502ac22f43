/// Observer calls waiting to run after the store's lock is released, in commit order.
///
/// Each change and commit is stored once however many observers hear it, and a call only names its
/// observer and the event's position: queuing a change for an observer copies no `Change`. Emptied
/// batches keep their storage and are reused, so delivering does not allocate.
struct DeliveryBatch: Sendable {
    private enum Call: Sendable {
        case change(ObserverBox, Int)
        case commit(ObserverBox, Int)
    }

    private var calls: [Call] = []
    private var changes: [Change] = []
    private var commits: [Commit] = []

    /// Whether no call is waiting.
    var isEmpty: Bool { calls.isEmpty }

    /// How many calls are waiting.
    var callCount: Int { calls.count }

    /// Queues a call of `box` with the change that the next `addChange` stores.
    mutating func addCall(_ box: ObserverBox) {
        calls.append(.change(box, changes.count))
    }

    /// Stores the change that the calls queued since the last `addChange` receive.
    mutating func addChange(_ change: consuming Change) {
        changes.append(change)
    }

    /// Queues `commit` for every one of `boxes`.
    mutating func add(_ commit: consuming Commit, for boxes: [ObserverBox]) {
        guard !boxes.isEmpty else { return }
        for box in boxes { calls.append(.commit(box, commits.count)) }
        commits.append(commit)
    }

    /// Runs every call in order, then empties the batch (keeping its storage).
    mutating func run() {
        for index in calls.indices {
            switch calls[index] {
            case .change(let box, let change): box.deliver(changes[change])
            case .commit(let box, let commit): box.deliver(commits[commit])
            }
        }
        calls.removeAll(keepingCapacity: true)
        changes.removeAll(keepingCapacity: true)
        commits.removeAll(keepingCapacity: true)
    }
}
