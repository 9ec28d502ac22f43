import Foundation

/// A thread of the store's own that takes over delivering when a writer has run its own calls and
/// calls of other threads' writes are waiting: a writer never runs observer calls for writes it did
/// not make (nor for what they caused), so its return does not wait for unrelated bindings.
///
/// Started on the first hand-over; stopped when the store goes away.
final class DeliveryRelay: @unchecked Sendable {
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var handedOver = false
    private var stopped = false
    private var started = false

    /// Wakes the relay thread (starting it the first time), which then calls `work` once; `work` holds
    /// the store weakly. Called with the store's lock held, which `work` takes: the thread waits for it.
    func handOver(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        handedOver = true
        if !started {
            started = true
            let thread = Thread(named: "lb-delivery") { [self] in run(work) }
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once it has nothing to do.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run(_ work: @Sendable () -> Void) {
        while true {
            condition.lock()
            while !handedOver && !stopped { condition.wait() }
            let go = handedOver
            handedOver = false
            condition.unlock()
            guard go else { return }
            work()
        }
    }
}
