import Dispatch

/// Calls `tick` every `interval` on a private dispatch queue until cancelled.
///
/// Dispatch rather than a Swift `Task`: an app (or a test) that blocks the cooperative thread pool
/// must not stop heartbeats.
package final class HeartbeatTimer: @unchecked Sendable {  // the source is only touched in init and cancel
    private let source: DispatchSourceTimer

    package init(interval: Duration, tick: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = interval.components
        let nanoseconds = max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "livebind.heartbeat"))
        source.schedule(
            deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
            leeway: .milliseconds(10))
        source.setEventHandler(handler: tick)
        source.resume()
    }

    /// Stops the timer; safe to call more than once.
    package func cancel() { source.cancel() }

    deinit { source.cancel() }
}
