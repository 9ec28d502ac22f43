import Dispatch
internal import LiveBindEngine

/// A task executor that runs its jobs on a serial dispatch queue, outside Swift's cooperative pool.
///
/// What lets a libmicrohttpd worker thread (or any thread, even one of the cooperative pool) wait for
/// async work, such as jwt-kit's actor-based verification, without needing a free thread of the pool:
/// a task started with this executor as its preference runs there, and so does the code of the default
/// actors it calls (SE-0417). An app or a test that blocks every thread of the pool cannot stall it.
package final class DispatchTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// An executor on a new serial queue called `label`.
    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `work` as a task on this executor and blocks the calling thread until it finishes or
    /// `timeout` passes (then nil; the task still runs to its end, on the queue).
    package func wait<Value: Sendable>(timeout: Duration, _ work: @escaping @Sendable () async throws -> Value) -> Result<Value, any Error>?
    {
        let outcome = Outcome<Value>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: self) {
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.set(result)
            done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let deadline = DispatchTime.now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        guard done.wait(timeout: deadline) == .success else { return nil }
        return outcome.get()
    }
}

import Synchronization

/// One result handed from a task to the thread waiting for it.
private final class Outcome<Value: Sendable>: Sendable {
    private let value = OrderedMutex<Result<Value, any Error>?>(nil)
    func set(_ result: Result<Value, any Error>) { value.withLock { $0 = result } }
    func get() -> Result<Value, any Error>? { value.withLock { $0 } }
}
