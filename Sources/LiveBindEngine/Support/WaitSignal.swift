import Foundation
import Synchronization

/// Lets a thread wait, without polling, for something other threads make true: the waiter gives the
/// test, and whoever may have made it true calls ``notify()`` afterwards, which costs one atomic load
/// while nobody waits.
///
/// The test must read state the notifier changed before it called ``notify()`` (an atomic, or state
/// under a lock the notifier no longer holds then): the notifier must not call ``notify()`` with a
/// lock held that the test takes.
package final class WaitSignal: Sendable {
    private let condition = NSCondition()
    private let waiters = Atomic<Int>(0)

    package init() {}

    /// Returns once `isDone` holds (true) or `deadline` passed (false, unless it holds by then).
    package func wait(until deadline: ContinuousClock.Instant, for isDone: () -> Bool) -> Bool {
        condition.lock()
        waiters.add(1, ordering: .sequentiallyConsistent)
        defer {
            waiters.subtract(1, ordering: .sequentiallyConsistent)
            condition.unlock()
        }
        while !isDone() {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return isDone() }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        return true
    }

    /// Wakes the waiters, if any, to test again. Call it after changing what they test.
    package func notify() {
        // Orders the caller's change before the load, as the waiter's increment is before its test:
        // one of the two sees the other.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard waiters.load(ordering: .sequentiallyConsistent) > 0 else { return }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
