import LiveBindEngine
internal import LiveBindHTTP

/// `/bindings`: the live bindings of the server's registry, as JSON resources.
///
/// An entry is the same JSON as one entry of a definition file
/// (`{"source":"sensor.temperature","target":"sensor.label","transform":{"name":"format","pattern":"%.1f °C"}}`);
/// answers are `Binding.json` (`id`, `source`, `target`, `mode`, `transform`, `enabled`, `fireCount`, `lastError`).
struct BindingsResource: Sendable {
    let registry: BindingRegistry
    let counters: ServerCounters
    /// Where bindings made over HTTP and enabled flags set over HTTP are kept; nil keeps them in memory.
    let database: StateDatabase?
    /// On a cluster node: the stream every change goes to first, so that every node makes it.
    var cluster: ClusterNode? = nil
    /// Where the answers to writes sent with `Idempotency-Key` are learned.
    let idempotency: IdempotencyTable

    /// `GET /bindings[?after=id]`: the bindings whose models the caller reaches, by id, in pages of at
    /// most `maxBytes` (`--max-list-bytes`) that end with `"next"` when more remain.
    func list(reach: AccessControl.Reach = .everything, after: String? = nil, maxBytes: Int = .max) -> HTTPResponse {
        let visible = registry.all.filter { Self.models(of: $0).allSatisfy { $0.map(reach.covers) ?? (reach == .everything) } }
            .sorted { $0.id < $1.id }
        return ListPage.make("bindings", visible, key: \.id, after: after, maxBytes: maxBytes) { binding, bytes in
            bytes += binding.json.encoded()
        }
    }

    /// Throws 404, as for an unknown id, unless the caller reaches the source and target models of
    /// binding `id`: a binding outside its reach does not exist for it (a 403 would say that it exists,
    /// and name a model it may not know of). A binding into Swift code needs a token for every model.
    func check(_ id: String, reach: AccessControl.Reach) throws(BindingError) {
        guard reach != .everything, let binding = registry.binding(id: id) else { return }
        for model in Self.models(of: binding) where !(model.map(reach.covers) ?? false) {
            throw .bindingNotFound(id)
        }
    }

    /// Throws 403 unless the caller reaches the source and target models of the binding in the body;
    /// a body that is no binding entry throws what `create` would.
    func checkNew(_ request: HTTPRequest, reach: AccessControl.Reach) throws {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        let spec = try BindingSpec(json: try RequestBody.parseJSON(request))
        try reach.check(spec.source.model)
        try reach.check(spec.target.model)
    }

    /// The source model and the target model (nil for a Swift closure or object target).
    private static func models(of binding: Binding) -> [String?] {
        [binding.source.model, binding.target.endpoint?.model]
    }

    /// `GET /bindings/{id}`.
    func get(_ id: String) throws -> HTTPResponse {
        guard let binding = registry.binding(id: id) else { throw BindingError.bindingNotFound(id) }
        return json(binding.json)
    }

    /// `POST /bindings`: creates a binding (201) and applies the current source value to its target.
    /// `tag`: the request's idempotency tag, kept with the change (see `AnswerReceipt`).
    func create(_ request: HTTPRequest, tag: String? = nil) throws -> HTTPResponse {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        var entry = try RequestBody.parseJSON(request)
        // A presence room changes only as connections join and leave: no binding may write into one
        // (as its target, or as the source of a two-way binding).
        if let spec = try? BindingSpec(json: entry) {
            for model in [spec.target.model] + (spec.mode == .twoWay ? [spec.source.model] : [])
            where EphemeralModels.contains(model) {
                throw PresenceError.roomWrittenDirectly(model)
            }
        }
        var sequence: UInt64 = 0
        if let cluster { (entry, sequence) = try publishCreation(entry, to: cluster, tag: tag) }
        let binding = try registry.bind(json: entry)
        let response = Self.created(binding)
        let receipt = AnswerReceipt(tag: tag, response: response, sequence: sequence)
        if let database, case .object(var members) = entry {
            members["id"] = .string(binding.id)
            do {
                try database.saveBinding(id: binding.id, definition: .object(members), answer: receipt?.record)
            } catch {
                try? registry.unbind(id: binding.id)
                throw error
            }
        }
        return answered(response, receipt)
    }

    /// `PATCH /bindings/{id}` with `{"enabled": false}` (or true).
    func update(_ id: String, _ request: HTTPRequest, tag: String? = nil) throws -> HTTPResponse {
        _ = try RequestBody.mediaType(of: request, accepted: [RequestBody.json, RequestBody.mergePatch])
        guard case .object(let members) = try RequestBody.parseJSON(request) else {
            throw RequestError.malformedBody(#"send an object such as {"enabled": false}"#)
        }
        for key in members.keys where key != "enabled" {
            throw RequestError.malformedBody("'\(key)' cannot be changed; only \"enabled\" can (delete and re-create to change a binding)")
        }
        guard case .bool(let enabled)? = members["enabled"] else {
            throw RequestError.malformedBody(#"send {"enabled": true} or {"enabled": false}"#)
        }
        guard registry.binding(id: id) != nil else { throw BindingError.bindingNotFound(id) }
        let sequence = try cluster?.publishBindingChange(.setEnabled(id: id, enabled: enabled), tag: tag) ?? 0
        try database?.saveEnabled(id: id, enabled)
        try registry.setEnabled(id: id, enabled)
        let response = try get(id)
        let receipt = AnswerReceipt(tag: tag, response: response, sequence: sequence)
        // Its own transaction, after the flag's: made again, the change would change nothing.
        if let database, let receipt { try database.saveAnswer(receipt.record) }
        return answered(response, receipt)
    }

    /// `DELETE /bindings/{id}`: removes the binding; answers its last state.
    func delete(_ id: String, tag: String? = nil) throws -> HTTPResponse {
        guard let binding = registry.binding(id: id) else { throw BindingError.bindingNotFound(id) }
        let response = json(binding.json)
        let sequence = try cluster?.publishBindingChange(.delete(id: id), tag: tag) ?? 0
        let receipt = AnswerReceipt(tag: tag, response: response, sequence: sequence)
        try database?.deleteBinding(id: id, answer: receipt?.record)
        try registry.unbind(id: id)
        return answered(response, receipt)
    }

    /// Counts the write and learns its receipt: a retry with its key gets `response`, on this node
    /// now, and (the receipt being kept with the change) after a restart and on every node.
    private func answered(_ response: HTTPResponse, _ receipt: AnswerReceipt?) -> HTTPResponse {
        counters.writes.add(1, ordering: .relaxed)
        if let receipt { idempotency.learn(receipt) }
        return response
    }

    /// Applies a change another cluster node made (from the stream, without catching up) to `registry`;
    /// returns what that node answered, as this node would have (its `fireCount` and `lastError`).
    static func replay(_ change: ClusterBindingChange, into registry: BindingRegistry) throws(BindingError) -> HTTPResponse {
        switch change {
        case .create(let id, let definition):
            try registry.makeReplayed(definition, id: id)
            guard let binding = registry.binding(id: id) else { throw .bindingNotFound(id) }
            return created(binding)
        case .setEnabled(let id, let enabled):
            try registry.setEnabledReplayed(id: id, enabled)
            guard let binding = registry.binding(id: id) else { throw .bindingNotFound(id) }
            return .bytes(binding.json.encoded(), contentType: RequestBody.json)
        case .delete(let id):
            guard let binding = registry.binding(id: id) else { throw .bindingNotFound(id) }
            let last = binding.json
            try registry.unbind(id: id)
            return .bytes(last.encoded(), contentType: RequestBody.json)
        }
    }

    /// The answer to a binding's creation: 201, its description and where it lives.
    private static func created(_ binding: Binding) -> HTTPResponse {
        var response = HTTPResponse.bytes(binding.json.encoded(), status: 201, contentType: RequestBody.json)
        response.headers.add("Location", "/bindings/\(binding.id)")
        return response
    }

    /// Checks a new binding's definition, gives it an id when it has none, and puts it in the cluster's
    /// stream with `tag`; returns the definition with its id, which this node then makes as every
    /// other node does, and the stream's sequence of the change.
    private func publishCreation(_ entry: JSON, to cluster: ClusterNode, tag: String?) throws -> (JSON, UInt64) {
        let spec = try BindingSpec(json: entry)
        _ = try registry.prepare(spec)
        guard case .object(var members) = entry else { return (entry, 0) }
        var id = spec.id ?? ""
        if id.isEmpty {
            var number = registry.all.count + 1
            while registry.binding(id: "b\(number)") != nil { number += 1 }
            id = "b\(number)"
        }
        if registry.binding(id: id) != nil { throw BindingError.duplicateID(id) }
        members["id"] = .string(id)
        let sequence = try cluster.publishBindingChange(.create(id: id, definition: .object(members)), tag: tag)
        return (.object(members), sequence)
    }

    private func json(_ value: JSON, status: Int = 200) -> HTTPResponse {
        .bytes(value.encoded(), status: status, contentType: RequestBody.json)
    }
}
