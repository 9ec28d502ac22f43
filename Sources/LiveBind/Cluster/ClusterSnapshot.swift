import Collections

/// Every model at one sequence of the cluster's stream, as a message of the snapshot stream:
/// `{"sequence":S,"models":[{"name":…,"rev":…,"value":{…}},…]}`.
struct ClusterSnapshot: Sendable {
    var sequence: UInt64
    var models: [ModelSnapshot]

    /// The message body.
    func encoded() -> [UInt8] {
        let models = models.map { model -> JSON in
            .object(["name": .string(model.name), "rev": .int(Int(model.revision)), "value": model.value])
        }
        let document: JSON = .object(["sequence": .int(Int(sequence)), "models": .array(Deque(models))])
        var bytes: [UInt8] = []
        document.encode(into: &bytes)
        return bytes
    }

    /// The snapshot a message body holds.
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
                  let value = entry["value"], case .object = value else {
                throw .diverged("a model of the last snapshot cannot be read")
            }
            models.append(ModelSnapshot(name: name, revision: UInt64(revision), value: value))
        }
        self.init(sequence: UInt64(sequence), models: models)
    }

    init(sequence: UInt64, models: [ModelSnapshot]) {
        self.sequence = sequence
        self.models = models
    }
}
