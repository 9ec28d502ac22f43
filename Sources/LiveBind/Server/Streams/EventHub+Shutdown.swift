import LiveBindEngine
internal import LiveBindHTTP
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
        _ = streamsClosed.wait(until: .now + deadline) { openStreams.load(ordering: .acquiring) == 0 }
        return openStreams.load(ordering: .acquiring)
    }
}
