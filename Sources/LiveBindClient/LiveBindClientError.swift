/// Why a request of the client failed.
public enum LiveBindClientError: Error, Sendable, CustomStringConvertible {
    /// The server refused a write for what it is against the model's state: 412 (the revision moved
    /// on), 409, 422. The local change was rolled back. `problem` is the server's
    /// `application/problem+json` body.
    case conflict(status: Int, problem: JSON)
    /// Any other refusal, with the server's status and problem.
    case refused(status: Int, problem: JSON)
    /// The server could not be reached, or its answer was lost, after the retries; with an offline
    /// queue the write waits there instead of failing.
    case unreachable(String)
    /// A target that is not a model, a location, a window or a view this client can use, or a write
    /// to something the mirror does not hold (or holds read-only: a window or a view).
    case invalidTarget(String)

    /// The HTTP status, for refusals.
    public var status: Int? {
        switch self {
        case .conflict(let status, _), .refused(let status, _): status
        case .unreachable, .invalidTarget: nil
        }
    }

    public var description: String {
        switch self {
        case .conflict(let status, let problem), .refused(let status, let problem):
            "\(status): \(problem["detail"]?.stringValue ?? problem.description)"
        case .unreachable(let reason): "the server cannot be reached: \(reason)"
        case .invalidTarget(let reason): reason
        }
    }

    /// The error for a refusal `answer` (status 300 or more).
    static func refusal(_ answer: HTTPAnswer) -> LiveBindClientError {
        let problem = answer.json ?? .object(["detail": .string(String(decoding: answer.body, as: UTF8.self))])
        return [409, 412, 422].contains(answer.status)
            ? .conflict(status: answer.status, problem: problem) : .refused(status: answer.status, problem: problem)
    }
}
