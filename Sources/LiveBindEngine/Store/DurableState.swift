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
    /// Set when the log is being closed (its server stopped): why. Later writes are refused with it;
    /// commits made before still become durable.
    var closing: String?
    /// Why a write is refused now, if it is.
    var refusal: String? { failure ?? closing }
    /// The entries holding a ``DurableView``.
    var pendingEntries: [ModelEntry] = []
    /// Who waits for a sequence to become durable, in the order they came (by sequence, but for a
    /// cluster's rollback).
    var waiters: [(sequence: UInt64, waiter: any DurableWaiter)] = []
    /// What the durable feed calls with each durable batch.
    var observers: [(id: UInt64, call: @Sendable ([Commit]) -> Void)] = []

    /// Keeps `entry` as it is now as what clients see, unless it already holds a view.
    @inline(__always)
    mutating func holdView(of entry: ModelEntry) {
        guard entry.durable == nil else { return }
        entry.durable = DurableView(document: entry.document, revision: entry.revision, exists: entry.exists)
        pendingEntries.append(entry)
    }

    /// Removes and returns the waiters whose sequence is at most `sequence`: usually every one, and
    /// then the array is emptied in one pass, keeping its storage for the next writes.
    mutating func takeWaiters(through sequence: UInt64) -> [any DurableWaiter] {
        guard !waiters.isEmpty else { return [] }
        var ready: [any DurableWaiter] = []
        if waiters.allSatisfy({ $0.sequence <= sequence }) {
            ready.reserveCapacity(waiters.count)
            for waiter in waiters { ready.append(waiter.waiter) }
            waiters.removeAll(keepingCapacity: true)
            return ready
        }
        waiters.removeAll { waiter in
            guard waiter.sequence <= sequence else { return false }
            ready.append(waiter.waiter)
            return true
        }
        return ready
    }
}

/// What waits for commits to become durable: a write's answer, or a thread in
/// ``Store/waitUntilDurable(through:)``. Told once, on the log's thread (or at once, on the caller's).
///
/// A class rather than a closure, so that a waiting write costs no allocation beyond its answer.
package protocol DurableWaiter: AnyObject, Sendable {
    /// Every commit waited for is durable (`nil`), or the log failed first (why).
    func durabilitySettled(_ error: StoreError?)
}

/// A closure as a ``DurableWaiter``.
final class DurableCallback: DurableWaiter {
    let call: @Sendable (StoreError?) -> Void

    init(_ call: @escaping @Sendable (StoreError?) -> Void) {
        self.call = call
    }

    func durabilitySettled(_ error: StoreError?) { call(error) }
}

/// What a commit log's thread runs after reporting to the store, without holding the store.
package struct DurableCalls {
    var waiters: [any DurableWaiter] = []
    var observers: [@Sendable ([Commit]) -> Void] = []
    /// Set when the log failed: what every waiter gets.
    var failure: StoreError?

    /// Tells the waiters, then the durable feed about `commits`.
    package func run(_ commits: [Commit]) {
        for waiter in waiters { waiter.durabilitySettled(failure) }
        if failure == nil { for call in observers { call(commits) } }
    }
}
