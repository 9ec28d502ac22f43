import Synchronization

/// Keeps an observer registered; cancel it (or let it go) to stop the calls.
///
/// `cancel()` is safe to call more than once and from any thread; the token cancels itself on `deinit`.
/// After `cancel()` returns, the handler is not called for deliveries that have not started yet.
public final class ObservationToken: Sendable {
    private let onCancel: OrderedMutex<(@Sendable () -> Void)?>

    /// A token that runs `onCancel` once, on the first `cancel()` or on `deinit`.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = OrderedMutex(onCancel)
    }

    /// Whether `cancel()` has run.
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }

    /// Stops the observer. Idempotent.
    public func cancel() {
        let action = onCancel.withLock { action in
            let taken = action
            action = nil
            return taken
        }
        action?()
    }

    deinit {
        cancel()
    }
}
