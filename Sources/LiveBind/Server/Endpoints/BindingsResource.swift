import Collections

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

    /// `GET /bindings`: `{"bindings":[…]}` in creation order, those whose models the caller reaches.
    func list(reach: AccessControl.Reach = .everything) -> HTTPResponse {
        let visible = registry.all.filter { Self.models(of: $0).allSatisfy { $0.map(reach.covers) ?? (reach == .everything) } }
        return json(.object(["bindings": .array(Deque(visible.map(\.json)))]))
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
    func create(_ request: HTTPRequest) throws -> HTTPResponse {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        var entry = try RequestBody.parseJSON(request)
        if let cluster { entry = try publishCreation(entry, to: cluster) }
        let binding = try registry.bind(json: entry)
        if let database, case .object(var members) = entry {
            members["id"] = .string(binding.id)
            do {
                try database.saveBinding(id: binding.id, definition: .object(members))
            } catch {
                try? registry.unbind(id: binding.id)
                throw error
            }
        }
        counters.writes.add(1, ordering: .relaxed)
        var response = json(binding.json, status: 201)
        response.headers.add("Location", "/bindings/\(binding.id)")
        return response
    }

    /// `PATCH /bindings/{id}` with `{"enabled": false}` (or true).
    func update(_ id: String, _ request: HTTPRequest) throws -> HTTPResponse {
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
        try cluster?.publishBindingChange(.setEnabled(id: id, enabled: enabled))
        try database?.saveEnabled(id: id, enabled)
        try registry.setEnabled(id: id, enabled)
        counters.writes.add(1, ordering: .relaxed)
        return try get(id)
    }

    /// `DELETE /bindings/{id}`: removes the binding; answers its last state.
    func delete(_ id: String) throws -> HTTPResponse {
        guard let binding = registry.binding(id: id) else { throw BindingError.bindingNotFound(id) }
        let last = binding.json
        try cluster?.publishBindingChange(.delete(id: id))
        try database?.deleteBinding(id: id)
        try registry.unbind(id: id)
        counters.writes.add(1, ordering: .relaxed)
        return json(last)
    }

    /// Checks a new binding's definition, gives it an id when it has none, and puts it in the cluster's
    /// stream; returns the definition with its id, which this node then makes as every other node does.
    private func publishCreation(_ entry: JSON, to cluster: ClusterNode) throws -> JSON {
        let spec = try BindingSpec(json: entry)
        _ = try registry.prepare(spec)
        guard case .object(var members) = entry else { return entry }
        var id = spec.id ?? ""
        if id.isEmpty {
            var number = registry.all.count + 1
            while registry.binding(id: "b\(number)") != nil { number += 1 }
            id = "b\(number)"
        }
        if registry.binding(id: id) != nil { throw BindingError.duplicateID(id) }
        members["id"] = .string(id)
        try cluster.publishBindingChange(.create(id: id, definition: .object(members)))
        return .object(members)
    }

    private func json(_ value: JSON, status: Int = 200) -> HTTPResponse {
        .bytes(value.encoded(), status: status, contentType: RequestBody.json)
    }
}
