import LiveBindEngine
/// How a server joins a cluster: the NATS servers whose JetStream stream holds the shared state.
public struct ClusterConfiguration: Sendable {
    /// NATS client URLs (`nats://127.0.0.1:4222`); the stream gets one replica per URL, up to 3.
    public var servers: [String]
    /// This node's name, sent as `LiveBind-Node` on every answer and shown in `/healthz`.
    public var nodeName: String
    /// The JetStream stream holding the commits (made when missing).
    public var stream: String = "LIVEBIND"
    /// Longest a write may wait for the stream (an election, a lost connection) before it gets 503.
    public var writeTimeout: Duration = .seconds(5)
    /// Commits between two snapshots of every model, kept in the stream `<stream>_SNAPSHOTS` so that a
    /// starting node loads the last one and replays only the commits after it; 0 takes none.
    public var snapshotInterval: Int = 10_000
    /// Most commits the stream keeps (the oldest go first); 0 keeps every one. Needs snapshots: at
    /// least three snapshot intervals, so that the commits after the last snapshot are always kept.
    /// Applies when the stream is made.
    public var maxCommits: Int = 0
    /// Longest a starting node waits to load the stream before it gives up.
    public var startTimeout: Duration = .seconds(120)

    /// A node of the cluster at `servers`, named `nodeName`.
    public init(servers: [String], nodeName: String) {
        self.servers = servers
        self.nodeName = nodeName
    }

    /// The stream holding snapshots.
    var snapshotStream: String { stream + "_SNAPSHOTS" }

    /// Replicas of the stream: one per NATS server given, 1 to 3.
    var replicas: Int { min(3, max(1, servers.count)) }
}
