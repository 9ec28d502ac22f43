/// Why a cluster node cannot take a write (or start).
public enum ClusterError: Error, Equatable, CustomStringConvertible {
    /// NATS or its JetStream stream does not answer: no connection, no quorum, an election that
    /// outlasted the write's time limit.
    case unavailable(String)
    /// The node stopped following the stream: a commit in it does not apply here.
    case diverged(String)

    /// A message a user can act on.
    public var description: String {
        switch self {
        case .unavailable(let reason):
            "the cluster's log is not available (\(reason)): retry shortly; nothing was written unless a later read shows it"
        case .diverged(let reason):
            "this node stopped following the cluster's log (\(reason)): restart it"
        }
    }
}
