#if canImport(Glibc)
import Glibc
#endif

extension EventHub {
    /// Ends every stream: refuses new ones, resumes the suspended so their readers return
    /// end-of-stream, then waits (up to `deadline`) until all have closed.
    /// Returns how many were still open at the deadline.
    @discardableResult
    func shutdown(deadline: Duration) -> Int {
        let wake: [any HTTPStreamConnection] = state.withLock { state in
            state.shuttingDown = true
            expiry.cancel()
            return state.suspended.removeWoken(byModel: nil).compactMap { state.subscribers[$0]?.connection }
        }
        for connection in wake { connection.resume() }
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while clock.now < end {
            let open = state.withLock { $0.subscribers.count }
            if open == 0 { return 0 }
            usleep(2_000)
        }
        return state.withLock { $0.subscribers.count }
    }
}
