import Synchronization

/// An answer that is known later: a write's, once the commit log has made it durable.
///
/// A handler returns ``HTTPResponse/deferred(_:)``; libmicrohttpd's worker then suspends the connection
/// (no thread waits) and queues the answer when ``complete(_:)`` wakes it.
final class DeferredAnswer: Sendable {
    private struct State {
        var response: HTTPResponse?
        /// Resumes the suspended connection; set once it is suspended.
        var wake: (@Sendable () -> Void)?
        /// Applied to the answer before it is sent (the access layer's headers).
        var finish: (@Sendable (inout HTTPResponse) -> Void)?
    }

    private let state = OrderedMutex(State())

    /// Sets the answer (once; later calls are ignored) and wakes its connection if it waits. Any thread.
    func complete(_ response: HTTPResponse) {
        let wake = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.response == nil else { return nil }
            state.response = response
            defer { state.wake = nil }
            return state.wake
        }
        wake?()
    }

    /// Called once the connection is suspended: `wake` resumes it, at once when the answer is known.
    func whenComplete(_ wake: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            guard state.response == nil else { return true }
            state.wake = wake
            return false
        }
        if now { wake() }
    }

    /// Adds a step applied to the answer before it is sent.
    func finishing(_ step: @escaping @Sendable (inout HTTPResponse) -> Void) {
        state.withLock { state in
            let earlier = state.finish
            state.finish = { response in
                earlier?(&response)
                step(&response)
            }
        }
    }

    /// The answer, finished, once known.
    var response: HTTPResponse? {
        let (response, finish) = state.withLock { ($0.response, $0.finish) }
        guard var response else { return nil }
        finish?(&response)
        return response
    }
}

extension HTTPResponse {
    /// A response the server sends once `answer` completes.
    static func deferred(_ answer: DeferredAnswer) -> HTTPResponse {
        var response = HTTPResponse(status: 202)
        response.deferred = answer
        return response
    }
}
