/// A model as its durable commits left it, while later commits wait for the log.
struct DurableView {
    var document: JSON
    var revision: UInt64
    var exists: Bool

    /// Replays `commit`, the model's next durable commit.
    mutating func apply(_ commit: Commit) {
        revision = commit.revision
        switch commit.kind {
        case .snapshot(let value):
            document = value
            exists = true
        case .drop:
            document = .null
            exists = false
            revision = 0
        case .changes(let changes):
            for change in changes {
                do throws(StoreError) {
                    try document.replay(change)
                } catch {
                    preconditionFailure("a durable change does not apply to the durable view: \\(error)")
                }
            }
        }
    }
}

/// The store's side of the commit log, under the store's lock: how far the log is durable, which
/// models have commits that are not, who waits, and whether the log failed.
struct DurableState {
    /// The sequence of the last durable commit.
    var sequence: UInt64
    /// Set when the log failed: why. Every later write is refused with it.
    var failure: String?
    /// The entries holding a ``DurableView``.
    var pendingEntries: [ModelEntry] = []
    /// Calls waiting for a sequence to become durable, in no particular order.
    var waiters: [(sequence: UInt64, call: @Sendable (StoreError?) -> Void)] = []
    /// What the durable feed calls with each durable batch.
    var observers: [(id: UInt64, call: @Sendable ([Commit]) -> Void)] = []

    /// Keeps `entry` as it is now as what clients see, unless it already holds a view.
    @inline(__always)
    mutating func holdView(of entry: ModelEntry) {
        guard entry.durable == nil else { return }
        entry.durable = DurableView(document: entry.document, revision: entry.revision, exists: entry.exists)
        pendingEntries.append(entry)
    }

    /// Removes and returns the waiters whose sequence is at most `sequence`.
    mutating func takeWaiters(through sequence: UInt64) -> [@Sendable (StoreError?) -> Void] {
        guard !waiters.isEmpty else { return [] }
        var ready: [@Sendable (StoreError?) -> Void] = []
        waiters.removeAll { waiter in
            guard waiter.sequence <= sequence else { return false }
            ready.append(waiter.call)
            return true
        }
        return ready
    }
}

/// What a commit log's thread runs after reporting to the store, without holding the store.
struct DurableCalls {
    var waiters: [@Sendable (StoreError?) -> Void] = []
    var observers: [@Sendable ([Commit]) -> Void] = []
    /// Set when the log failed: what every waiter gets.
    var failure: StoreError?

    /// Tells the waiters, then the durable feed about `commits`.
    func run(_ commits: [Commit]) {
        for call in waiters { call(failure) }
        if failure == nil { for call in observers { call(commits) } }
    }
}
