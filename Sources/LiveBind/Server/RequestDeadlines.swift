import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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

    private struct State {
        /// Every open connection's socket.
        var sockets: [Key: Int32] = [:]
        /// Connections waiting for a request, and since when.
        var waiting: [Key: ContinuousClock.Instant] = [:]
    }

    let limit: Duration
    private let state = OrderedMutex(State())
    private let clock = ContinuousClock()

    init(limit: Duration) {
        self.limit = limit
    }

    /// A connection opened on `socket`: its first request must arrive within the limit.
    func opened(_ key: Key, socket: Int32) {
        let now = clock.now
        state.withLock { state in
            state.sockets[key] = socket
            state.waiting[key] = now
        }
    }

    /// A response was queued: the request is in, its clock stops.
    func responded(_ key: Key) {
        state.withLock { _ = $0.waiting.removeValue(forKey: key) }
    }

    /// A request finished; on a kept-alive connection the next one must arrive within the limit.
    func completed(_ key: Key) {
        let now = clock.now
        state.withLock { state in
            if state.sockets[key] != nil { state.waiting[key] = now }
        }
    }

    /// The connection is closing; its socket is about to be closed by libmicrohttpd.
    func closed(_ key: Key) {
        state.withLock { state in
            state.sockets[key] = nil
            state.waiting[key] = nil
        }
    }

    /// Shuts down every connection whose request is overdue; returns how many.
    /// The corresponding C function is `shutdown`.
    func sweep() -> Int {
        let now = clock.now
        return state.withLock { state in
            var count = 0
            for (key, since) in state.waiting where now - since > limit {
                state.waiting[key] = nil
                if let socket = state.sockets[key] {
                    _ = shutdown(socket, Int32(SHUT_RDWR))
                    count += 1
                }
            }
            return count
        }
    }

    /// How often `sweep` should run: a fraction of the limit, between 50 ms and 1 s.
    var sweepInterval: Duration {
        min(.seconds(1), max(.milliseconds(50), limit / 4))
    }
}
