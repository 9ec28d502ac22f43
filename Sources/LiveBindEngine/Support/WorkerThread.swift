import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A named thread of the library's own and the lock its loop waits on: the owner keeps its queue
/// under ``withLock(_:)``, wakes the thread with ``signal()``, and ``stop()`` ends the loop and
/// joins it, without polling.
///
/// The loop reads ``isStopping`` (with the lock held) and returns when it is set; ``stop()`` sets it,
/// wakes every waiter, and returns once the loop has returned — at once when called on the thread
/// itself (the owner's last reference went away in one of its own calls), whose loop then ends as
/// soon as it looks.
package final class WorkerThread: @unchecked Sendable {
    // `@unchecked`: the flags and `threadID` are only touched with `condition` locked.
    /// The thread's name, for Foundation and the operating system (15 bytes of it on Linux).
    let name: String
    private let condition = NSCondition()
    private var stopRequested = false
    private var started = false
    private var finished = false
    /// The running thread, set as it starts. The `Thread` itself is not kept: it holds its closure,
    /// which holds this object, and the cycle would keep the owner alive after the thread ended.
    private var threadID: pthread_t?

    /// A thread called `name`, not started yet.
    package init(named name: String) {
        self.name = name
    }

    /// Starts the thread running `body`, unless it was started before (then returns false and `body`
    /// is not run); it is finished when `body` returns.
    @discardableResult
    package func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let first = withLock { () -> Bool in
            defer { started = true }
            return !started
        }
        guard first else { return false }
        let thread = Thread(named: name) { [self] in
            withLock { threadID = pthread_self() }
            body()
            withLock {
                finished = true
                condition.broadcast()
            }
        }
        thread.start()
        return true
    }

    /// Runs `body` with the thread's lock held: the owner's fields the loop reads are only touched here.
    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    /// With the lock held: whether ``stop()`` was called. The loop returns when it is.
    package var isStopping: Bool { stopRequested }

    /// With the lock held: whether the thread ran and its loop returned.
    package var hasFinished: Bool { finished }

    /// With the lock held: sleeps until woken (``signal()``, ``broadcast()``, ``stop()``); the caller
    /// checks again what it waits for.
    package func wait() {
        condition.wait()
    }

    /// With the lock held: sleeps until woken or `deadline`; false when the deadline passed.
    @discardableResult
    package func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
        return condition.wait(until: Date(timeIntervalSinceNow: seconds))
    }

    /// Wakes one waiter. Best called after leaving ``withLock(_:)``, so the woken thread does not
    /// block on the lock at once.
    package func signal() {
        condition.signal()
    }

    /// Wakes every waiter (the loop and threads waiting for its progress).
    package func broadcast() {
        condition.broadcast()
    }

    /// Whether the caller is this thread.
    package var isCurrent: Bool {
        withLock { isCurrentLocked }
    }

    private var isCurrentLocked: Bool {
        threadID.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Asks the loop to end, wakes it, and returns once it has ended (at once on the thread itself,
    /// or when it never started). Safe to call more than once.
    package func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopRequested = true
        condition.broadcast()
        guard started, !isCurrentLocked else { return }
        while !finished { condition.wait() }
    }
}
