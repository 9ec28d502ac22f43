import Synchronization
#if canImport(Glibc)
import Glibc
#endif
internal import LiveBindEngine

/// Cuts connections whose request (headers and body) takes longer than a deadline to arrive.
///
/// libmicrohttpd's connection timeout is an idle timeout: a client that sends one byte every few
/// seconds (slowloris) never trips it. Here each connection's clock starts when it opens or when its
/// previous request completed, and stops when a response is queued; past the deadline the socket is
/// shut down, so libmicrohttpd's next read sees the end and closes the connection itself.
///
/// > Important: `opened`, `responded`, `completed` and `closed` are called on libmicrohttpd worker
/// threads; `sweep` on a timer. `closed` comes before libmicrohttpd closes the socket, and `sweep`
/// shuts sockets down under the same lock, so a socket number reused by a new connection is never hit.
final class RequestDeadlines: Sendable {
    /// A connection, by its libmicrohttpd handle.
    typealias Key = Int

    /// One open connection's clock. Its worker thread starts and stops it without a lock (every
    /// request does both); `sweep` reads it.
    final class Clock: Sendable {
        let socket: Int32
        /// Since when the connection waits for a request (nanoseconds of the monotonic clock), or 0
        /// while one is being answered.
        fileprivate let waitingSince: Atomic<Int64>

        fileprivate init(socket: Int32, since: Int64) {
            self.socket = socket
            waitingSince = Atomic(since)
        }
    }

    let limit: Duration
    /// Every open connection's clock.
    private let clocks = OrderedMutex<[Key: Clock]>([:])

    init(limit: Duration) {
        self.limit = limit
    }

    /// A connection opened on `socket`: its first request must arrive within the limit. The connection
    /// keeps the returned clock for ``responded(_:)`` and ``completed(_:)``.
    func opened(_ key: Key, socket: Int32) -> Clock {
        let clock = Clock(socket: socket, since: Self.now())
        clocks.withLock { $0[key] = clock }
        return clock
    }

    /// A response was queued: the request is in, its clock stops.
    func responded(_ clock: Clock) {
        clock.waitingSince.store(0, ordering: .relaxed)
    }

    /// A request finished; on a kept-alive connection the next one must arrive within the limit.
    func completed(_ clock: Clock) {
        clock.waitingSince.store(Self.now(), ordering: .relaxed)
    }

    /// The connection is closing; its socket is about to be closed by libmicrohttpd.
    func closed(_ key: Key) {
        clocks.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Shuts down every connection whose request is overdue; returns how many.
    /// The corresponding C function is `shutdown`.
    ///
    /// A clock is stopped by compare-and-swap, so a request answered while the sweep looked at it is
    /// not cut; the lock keeps `closed` (and so the socket's reuse) out while sockets are shut down.
    func sweep() -> Int {
        let deadline = Self.now() - Self.nanoseconds(limit)
        return clocks.withLock { clocks in
            var count = 0
            for clock in clocks.values {
                let since = clock.waitingSince.load(ordering: .relaxed)
                guard since != 0, since < deadline,
                    clock.waitingSince.compareExchange(expected: since, desired: 0, ordering: .relaxed).exchanged
                else { continue }
                _ = shutdown(clock.socket, Int32(SHUT_RDWR))
                count += 1
            }
            return count
        }
    }

    /// How often `sweep` should run: a fraction of the limit, between 50 ms and 1 s.
    var sweepInterval: Duration {
        min(.seconds(1), max(.milliseconds(50), limit / 4))
    }

    /// Now on the monotonic clock, in nanoseconds (never 0, which means "not waiting"). The
    /// corresponding C function is `clock_gettime`.
    private static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return max(1, Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
