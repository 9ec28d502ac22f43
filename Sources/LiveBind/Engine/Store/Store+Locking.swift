import Synchronization

extension Store {
    /// Runs `body` with the store's state locked.
    ///
    /// `Mutex` takes contended locks in `libswiftSynchronization` (`_lockSlow`), which the thread
    /// sanitizer does not instrument, so it cannot see that lock handoff orders the critical sections
    /// and reports false races. The acquire load and release store of `lockOrder` inside the lock make
    /// that ordering visible to it; on x86-64 and arm64 they are plain loads and stores.
    func withState<R: Sendable, E: Error>(_ body: (inout StoreState) throws(E) -> R) throws(E) -> R {
        try state.withLock { (state) throws(E) -> R in
            _ = lockOrder.load(ordering: .acquiring)
            defer { lockOrder.store(0, ordering: .releasing) }
            return try body(&state)
        }
    }
}
