/// A thread of the store's own that takes over delivering when a writer has run its own calls and
/// calls of other threads' writes are waiting: a writer never runs observer calls for writes it did
/// not make (nor for what they caused), so its return does not wait for unrelated bindings.
///
/// Started on the first hand-over; stopped when the store goes away.
final class DeliveryRelay: @unchecked Sendable {
    // `@unchecked`: `handedOver` is only touched with the worker's lock held.
    private let worker = WorkerThread(named: "lb-delivery")
    private var handedOver = false

    /// Wakes the relay thread (starting it the first time), which then calls `work` once; `work` holds
    /// the store weakly. Called with the store's lock held, which `work` takes: the thread waits for it.
    func handOver(_ work: @escaping @Sendable () -> Void) {
        worker.withLock { handedOver = true }
        worker.start { [self] in run(work) }
        worker.signal()
    }

    /// Ends the thread once it has nothing to do; returns once it has (at once on the thread itself).
    func stop() {
        worker.stop()
    }

    private func run(_ work: @Sendable () -> Void) {
        while true {
            let go = worker.withLock { () -> Bool in
                while !handedOver && !worker.isStopping { worker.wait() }
                defer { handedOver = false }
                return handedOver
            }
            guard go else { return }
            work()
        }
    }
}
