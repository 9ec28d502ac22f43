/// Observer calls waiting to run after the store's lock is released, in commit order.
///
/// Each change and commit is stored once however many observers hear it, and a call only names its
/// observer and the event's position: queuing a change for an observer copies no `Change`. Emptied
/// batches keep their storage and are reused, so delivering does not allocate.
struct DeliveryBatch: Sendable {
    /// One observer call: the observer, the position of its event in `changes` or `commits`, and the
    /// stamp of a change (kept here rather than in an array of its own, which would cost an append and
    /// an emptying per change).
    private struct Call: Sendable {
        let box: ObserverBox
        let event: Int
        let isCommit: Bool
        var stamp = ChangeStamp(order: 0, depth: 0)
    }

    private var calls: [Call] = []
    private var changes: [Change] = []
    private var commits: [Commit] = []

    /// Whether no call is waiting.
    var isEmpty: Bool { calls.isEmpty }

    /// How many calls are waiting.
    var callCount: Int { calls.count }

    /// Queues a call of `box` with the change that the next `addChange` stores, made by the commit
    /// `stamp` names.
    mutating func addCall(_ box: ObserverBox, _ stamp: ChangeStamp) {
        calls.append(Call(box: box, event: changes.count, isCommit: false, stamp: stamp))
    }

    /// Stores the change that the calls queued since the last `addChange` receive.
    mutating func addChange(_ change: consuming Change) {
        changes.append(change)
    }

    /// Queues `commit` for every one of `boxes`.
    mutating func add(_ commit: consuming Commit, for boxes: [ObserverBox]) {
        guard !boxes.isEmpty else { return }
        for box in boxes { calls.append(Call(box: box, event: commits.count, isCommit: true)) }
        commits.append(commit)
    }

    /// Runs every call in order, then empties the batch (keeping its storage).
    mutating func run() {
        // Through buffer pointers, so that each call borrows its observer and its event instead of
        // copying them out of the arrays (a retain and a release each). Nothing else can reach this
        // batch while it runs: a write made by an observer queues into the store's own batch.
        calls.withUnsafeBufferPointer { calls in
            changes.withUnsafeBufferPointer { changes in
                commits.withUnsafeBufferPointer { commits in
                    for index in calls.indices {
                        if calls[index].isCommit {
                            calls[index].box.deliver(commits[calls[index].event])
                        } else {
                            calls[index].box.deliver(changes[calls[index].event], calls[index].stamp)
                        }
                    }
                }
            }
        }
        Self.empty(&calls)
        Self.empty(&changes)
        Self.empty(&commits)
    }

    /// Empties `array`, keeping its storage. Most batches hold one call of one change (or only
    /// commits): `removeLast()` is much cheaper than the general `removeAll(keepingCapacity:)`, and an
    /// empty array needs nothing.
    private static func empty<Element>(_ array: inout [Element]) {
        switch array.count {
        case 0: break
        case 1: array.removeLast()
        default: array.removeAll(keepingCapacity: true)
        }
    }
}
