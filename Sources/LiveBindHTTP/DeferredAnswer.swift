import Synchronization
internal import LiveBindEngine
#if canImport(Glibc)
import Glibc
#endif

/// An answer that is known later: a write's, once the commit log has made it durable.
///
/// A handler returns ``HTTPResponse/deferred(_:)``; libmicrohttpd's worker then suspends the connection
/// (no thread waits) and queues the answer when ``complete(_:)`` resumes it, from any thread.
package final class DeferredAnswer: Sendable {
    private struct State {
        var response: HTTPResponse?
        /// The suspended connection to resume once the answer is known.
        var connection: MicroHTTPDConnection?
        /// Applied to the answer before it is sent (the access layer's headers).
        var finish: (@Sendable (inout HTTPResponse) -> Void)?
    }

    private let state = OrderedMutex(State())

    /// An answer some other code completes.
    package init() {}

    /// Sets the answer (once; later calls are ignored) and resumes its connection if it waits. Any thread.
    package func complete(_ response: HTTPResponse) {
        let connection = state.withLock { state -> MicroHTTPDConnection? in
            guard state.response == nil else { return nil }
            state.response = response
            defer { state.connection = nil }
            return state.connection
        }
        connection?.resume()
    }

    /// Suspends `connection` until the answer is known: ``complete(_:)`` then resumes it (at once when
    /// the answer came first: a rare race, as a handler returns a known answer instead of deferring).
    /// Called on the connection's worker thread, which asks for the answer when it is resumed.
    func suspend(_ connection: MicroHTTPDConnection) {
        // Suspended before the lock: `complete` may resume it as soon as it is registered, and the
        // lock is never held across a call into libmicrohttpd.
        connection.suspend()
        let known = state.withLock { state in
            guard state.response == nil else { return true }
            state.connection = connection
            return false
        }
        if known { connection.resume() }
    }

    /// The answer, waited for on this thread for at most `limit`; nil when it did not come. It polls
    /// every millisecond: only a stopping daemon waits so, instead of suspending the connection.
    func wait(atMost limit: Duration) -> HTTPResponse? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let response { return response }
            if ContinuousClock.now >= deadline { return nil }
            usleep(1000)
        }
    }

    /// Adds a step applied to the answer before it is sent.
    package func finishing(_ step: @escaping @Sendable (inout HTTPResponse) -> Void) {
        state.withLock { state in
            guard let earlier = state.finish else { return state.finish = step }
            state.finish = { response in
                earlier(&response)
                step(&response)
            }
        }
    }

    /// The answer, finished, once known.
    package var response: HTTPResponse? {
        let (response, finish) = state.withLock { ($0.response, $0.finish) }
        guard var response else { return nil }
        finish?(&response)
        return response
    }
}

extension HTTPResponse {
    /// A response the server sends once `answer` completes.
    package static func deferred(_ answer: DeferredAnswer) -> HTTPResponse {
        var response = HTTPResponse(status: 202)
        response.deferred = answer
        return response
    }
}
