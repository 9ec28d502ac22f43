import LiveBindEngine
/// Why a cluster node cannot take a write (or start).
public enum ClusterError: Error, Equatable, CustomStringConvertible {
    /// NATS or its JetStream stream does not answer: no connection, no quorum, an election that
    /// outlasted the write's time limit.
    case unavailable(String)
    /// The node stopped following the stream: a commit in it does not apply here.
    case diverged(String)
    /// A commit (or binding change) of `bytes` would not fit in one message of the cluster's NATS
    /// servers, which hold at most `limit` bytes (their `max_payload`): it can never be stored, so the
    /// write is refused and changes nothing.
    case tooLarge(bytes: Int, limit: Int)

    /// A message a user can act on.
    public var description: String {
        switch self {
        case .unavailable(let reason):
            "the cluster's log is not available (\(reason)): retry shortly; the write may have been stored (a later read shows it): a write to /models/{name}… retried with the same Idempotency-Key gets its answer instead of being written again"
        case .diverged(let reason):
            "this node stopped following the cluster's log (\(reason)): restart it"
        case .tooLarge(let bytes, let limit):
            "the write makes a change of \(bytes) bytes, and the cluster's log takes at most \(limit) bytes in one (the NATS servers' max_payload): write a smaller part at a time (a pointer, a JSON Patch), or raise max_payload"
        }
    }
}
