import Synchronization

/// A `Mutex` whose critical sections the thread sanitizer sees in order.
///
/// `Mutex` takes contended locks in `libswiftSynchronization` (`_lockSlow`), which the thread
/// sanitizer does not instrument, so under contention it reports false races between critical
/// sections. The acquire load and release store of `order` inside the lock make the handoff visible
/// to it; on x86-64 and arm64 they are plain loads and stores.
///
/// Every lock of the library is one of these (the store's state, the commit log's connection, each
/// registry and table), except the lock a ``WorkerThread`` or ``WaitSignal`` sleeps on, which is a
/// condition's.
package final class OrderedMutex<Value>: Sendable {
    private let mutex: Mutex<Value>
    private let order = Atomic<Int>(0)

    package init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value locked.
    package func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        try mutex.withLock { (value) throws(E) -> sending Result in
            _ = order.load(ordering: .acquiring)
            defer { order.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }
}
