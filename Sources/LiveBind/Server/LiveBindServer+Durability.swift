import LiveBindEngine
internal import LiveBindHTTP
extension LiveBindServer {
    /// The answer to a write request, to be sent once every commit made so far is durable: whatever the
    /// write committed, the bindings it ran, and what it could have read. At once without a data
    /// directory, or when the disk has caught up; else deferred, with no thread waiting. When the data
    /// directory fails first, a success becomes 503 (the write is not kept; clients never saw it).
    static func answerOnceDurable(_ response: HTTPResponse, store: Store, counters: ServerCounters) -> HTTPResponse {
        guard store.log != nil else { return response }
        let durable = DurableAnswer(response, counters: counters)
        store.whenDurable(tell: durable)
        return durable.answer.response ?? .deferred(durable.answer)
    }

    /// Whether a write request may commit: `/models…` and `/bindings…` (bindings write their targets).
    /// Other writes (`POST /session`, `PATCH /events/{stream}`) need no turn, and work while the node
    /// is cut off from NATS.
    static func changesModels(_ request: HTTPRequest) -> Bool {
        request.path == "/models" || request.path.hasPrefix("/models/") || request.path == "/bindings"
            || request.path.hasPrefix("/bindings/")
    }

    /// The header naming the cluster node that answered.
    static let nodeHeader = "LiveBind-Node"

    /// The answer to a write request on a cluster node: the request runs in the node's next write turn
    /// (again when another node's commit took the sequence first), and is answered once its commits
    /// are in the cluster's stream and applied here; 503 when the stream does not answer in time.
    static func answerInTurn(_ request: HTTPRequest, router: Router, cluster: ClusterNode, counters: ServerCounters)
        -> HTTPResponse
    {
        let answer = DeferredAnswer()
        let made = OrderedMutex<HTTPResponse?>(nil)
        // A write that changes the bindings puts its change in the stream first: it runs by itself.
        cluster.submit(
            alone: request.path.hasPrefix("/bindings"),
            {
                let response: HTTPResponse
                do {
                    response = try router.route(request)
                } catch {
                    response = Problem.from(error).response
                }
                made.withLock { $0 = response }
            },
            done: { error in
                let ran = made.withLock { $0 }
                var response =
                    error.map { Problem.from($0).response } ?? ran
                    ?? Problem.from(ClusterError.unavailable("the write did not run")).response
                if response.status >= 400 { counters.addError() }
                response.settle = ran?.settle
                answer.complete(response)
            })
        return answer.response ?? .deferred(answer)
    }
}

extension LiveBindServer {
    /// `/healthz` of a cluster node: 200 with the node's place in the stream, or 503 with
    /// `"status":"unavailable"` while it cannot take writes (no connection to NATS).
    static func clusterHealth(_ status: ClusterStatus, sessions: Bool) -> HTTPResponse {
        var body = #"{"status":"\#(status.connected ? "ok" : "unavailable")","version":"\#(LiveBindVersion.string)""#
        if sessions { body += #","sessions":true"# }
        if !status.connected { body += #","detail":"this node is cut off from the cluster's NATS servers and refuses writes""# }
        var node: [UInt8] = []
        JSON.string(status.node).encode(into: &node)
        body += #","cluster":{"node":\#(String(decoding: node, as: UTF8.self)),"connected":\#(status.connected),"#
        body += #""applied":\#(status.applied),"lag":\#(status.lag),"role":"\#(status.role)"}}"#
        return .text(body, status: status.connected ? 200 : 503, contentType: "application/json")
    }
}

/// The answer to a write: `response` once the commits it waits for (see ``Store/whenDurable(through:tell:)``)
/// are durable; when the data directory failed first, a success becomes 503 (the write is not kept;
/// clients never saw it).
final class DurableAnswer: DurableWaiter {
    /// What the connection waits for.
    let answer = DeferredAnswer()
    /// What to send once the commits are durable.
    private let response: HTTPResponse
    /// Where a failure is counted.
    private let counters: ServerCounters

    /// Completes `answer` with `response` once durable; `counters` counts a failure.
    init(_ response: HTTPResponse, counters: ServerCounters) {
        self.response = response
        self.counters = counters
    }

    /// Completes the answer: the write's response, or the log's failure as a problem.
    func durabilitySettled(_ error: StoreError?) {
        guard let error, response.status < 400 else { return answer.complete(response) }
        counters.addError()
        answer.complete(Problem.from(error).response)
    }
}
