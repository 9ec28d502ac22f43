import Synchronization

/// Request counters for `/metrics`, lock-free.
package final class ServerCounters: Sendable {
    package let requests = Atomic<Int>(0)
    package let writes = Atomic<Int>(0)
    package let errors = Atomic<Int>(0)
    /// Writes refused by the write rate limit.
    package let rateLimitedWrites = Atomic<Int>(0)
    /// Connections cut because their request (headers and body) did not arrive in time.
    package let slowRequestsClosed = Atomic<Int>(0)
    /// Event streams closed by the idle timeout because their client stopped reading.
    package let stalledStreamsClosed = Atomic<Int>(0)

    package func add(request: HTTPRequest) { requests.add(1, ordering: .relaxed) }

    package func addError() { errors.add(1, ordering: .relaxed) }

    /// Counters at zero.
    package init() {}
}
