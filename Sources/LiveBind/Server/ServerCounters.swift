import Synchronization
import LiveBindEngine

/// Request counters for `/metrics`, lock-free.
final class ServerCounters: Sendable {
    let requests = Atomic<Int>(0)
    let writes = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    /// Writes refused by the write rate limit.
    let rateLimitedWrites = Atomic<Int>(0)
    /// Connections cut because their request (headers and body) did not arrive in time.
    let slowRequestsClosed = Atomic<Int>(0)
    /// Event streams closed by the idle timeout because their client stopped reading.
    let stalledStreamsClosed = Atomic<Int>(0)

    func add(request: HTTPRequest) { requests.add(1, ordering: .relaxed) }

    func addError() { errors.add(1, ordering: .relaxed) }
}
