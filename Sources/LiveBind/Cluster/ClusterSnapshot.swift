import LiveBindEngine

/// Every model at one sequence of the cluster's stream: what a node loads at start. Stored as chunks
/// (``SnapshotManifest``, ``SnapshotIndex``); version 0.1.0 stored it whole in one message,
/// `{"sequence":S,"models":[{"name":…,"rev":…,"value":{…}},…]}`, which ``init(body:)`` still reads.
struct ClusterSnapshot: Sendable {
    /// The stream sequence it was cut at, and the event id (the last commit's sequence; in 0.1 the same).
    var sequence: UInt64
    var events: UInt64
    var models: [ModelSnapshot]
    /// The bindings made over HTTP at that sequence (`"bindings":[{"id","definition","enabled"}]`).
    var bindings: [(id: String, definition: JSON, enabled: Bool)] = []
    /// The receipts of idempotent writes in their window at the cut.
    var receipts: [CommitReceipt] = []
    /// The receipts of idempotent `/bindings` writes, as the server encodes them (`AnswerReceipt`).
    var answers: [JSON] = []

    /// The snapshot `body` (its chunks joined) holds.
    init(body: [UInt8]) throws(ClusterError) {
        let document: JSON
        do {
            document = try JSON(parsing: body, maxDepth: StoreLimits.depthCeiling + 4)
        } catch {
            throw .diverged("the last snapshot cannot be read: \(error)")
        }
        guard case .int(let sequence)? = document["sequence"], sequence >= 0, let list = document["models"]?.arrayValue else {
            throw .diverged("the last snapshot has no sequence or models")
        }
        var models: [ModelSnapshot] = []
        for entry in list {
            guard let name = entry["name"]?.stringValue, case .int(let revision)? = entry["rev"], revision >= 0,
                let value = entry["value"], case .object = value
            else {
                throw .diverged("a model of the last snapshot cannot be read")
            }
            models.append(ModelSnapshot(name: name, revision: UInt64(revision), value: value))
        }
        var bindings: [(id: String, definition: JSON, enabled: Bool)] = []
        for entry in document["bindings"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, let definition = entry["definition"], case .bool(let enabled)? = entry["enabled"]
            else {
                throw .diverged("a binding of the last snapshot cannot be read")
            }
            bindings.append((id, definition, enabled))
        }
        self.init(sequence: UInt64(sequence), events: UInt64(sequence), models: models, bindings: bindings)
    }

    init(sequence: UInt64, events: UInt64, models: [ModelSnapshot], bindings: [(id: String, definition: JSON, enabled: Bool)] = []) {
        self.sequence = sequence
        self.events = events
        self.models = models
        self.bindings = bindings
    }
}
