/// Observer calls waiting to run after the store's lock is released, in commit order.
///
/// Each change and commit is stored once however many observers hear it, and a call only names its
/// observer and the event's position: queuing a change for an observer copies no `Change`. Emptied
/// batches keep their storage and are reused, so delivering does not allocate.
struct DeliveryBatch: Sendable {
    /// One observer call: the observer and the position of its event in `changes` or `commits`.
    private struct Call: Sendable {
        let box: ObserverBox
        let event: Int
        let isCommit: Bool
    }

    private var calls: [Call] = []
    private var changes: [Change] = []
    /// The stamp of each change in `changes`.
    private var stamps: [ChangeStamp] = []
    private var commits: [Commit] = []

    /// Whether no call is waiting.
    var isEmpty: Bool { calls.isEmpty }

    /// How many calls are waiting.
    var callCount: Int { calls.count }

    /// Queues a call of `box` with the change that the next `addChange` stores.
    mutating func addCall(_ box: ObserverBox) {
        calls.append(Call(box: box, event: changes.count, isCommit: false))
    }

    /// Stores the change that the calls queued since the last `addChange` receive.
    mutating func addChange(_ change: consuming Change, _ stamp: ChangeStamp) {
        changes.append(change)
        stamps.append(stamp)
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
                            calls[index].box.deliver(changes[calls[index].event], stamps[calls[index].event])
                        }
                    }
                }
            }
        }
        calls.removeAll(keepingCapacity: true)
        changes.removeAll(keepingCapacity: true)
        stamps.removeAll(keepingCapacity: true)
        commits.removeAll(keepingCapacity: true)
    }
}
