import OrderedCollections
import LiveBindEngine
internal import LiveBindHTTP

/// `PATCH /models`: one write to several models, atomic (see `Store.write(_:)`).
///
/// The body (`application/json`) maps each model to its patch: `{"merge": <RFC 7386 merge patch>}` or
/// `{"patch": [<RFC 6902 operations>]}`, and optionally `"ifMatch": <revision>`. Every model must
/// exist and be reachable by the caller; every precondition must hold and every patch apply, or
/// nothing changes and the problem names the model. The answer is each model's event id and revision,
/// and the last event id: `{"id":"…","models":{"a":{"id":"…","rev":N},…}}`.
extension ModelEndpoint {
    func patchSeveral(_ request: HTTPRequest, reach: AccessControl.Reach) throws -> HTTPResponse {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        let edits = try Self.severalEdits(try RequestBody.parseJSON(request), reach: reach, store: store)
        let results = try Self.write(edits, to: store)
        counters.writes.add(1, ordering: .relaxed)
        return Self.severalWritten(zip(edits.edits, results).map { ($0.model, $1) })
    }

    /// The edits a body of `PATCH /models` asks for, checked (every model reachable, no presence room,
    /// at most `--max-patch-operations`), not yet applied. Also what `onDisconnect` writes are.
    static func severalEdits(
        _ body: JSON, reach: AccessControl.Reach, store: Store
    ) throws -> (edits: [Store.ModelEdits], jsonPatched: Set<String>) {
        guard case .object(let parts) = body, !parts.isEmpty else {
            throw RequestError.malformedBody(#"send an object of models to their patches: {"sensor": {"merge": {…}, "ifMatch": 3}}"#)
        }
        let limit = store.limits.maxPatchOperations
        var operations = 0
        var edits: [Store.ModelEdits] = []
        var jsonPatched = Set<String>()
        for (name, part) in parts {
            try reach.check(name)
            if EphemeralModels.contains(name) { throw PresenceError.roomWrittenDirectly(name) }
            guard case .object(let fields) = part, Set(fields.keys).isSubset(of: ["merge", "patch", "ifMatch"]),
                (fields["merge"] == nil) != (fields["patch"] == nil)
            else {
                throw RequestError.malformedBody("model \(name): give exactly one of \"merge\" or \"patch\", and \"ifMatch\" if you like")
            }
            var revision: UInt64?
            if let given = fields["ifMatch"] {
                guard case .int(let number) = given, number >= 0 else {
                    throw RequestError.malformedBody("model \(name): ifMatch is a revision, a whole number")
                }
                revision = UInt64(number)
            }
            if let merge = fields["merge"] {
                operations += 1
                edits.append(
                    Store.ModelEdits(name, ifRevision: revision) { (editor: inout ModelEditor) throws(StoreError) in
                        try editor.mergePatch(merge, at: .root)
                    })
            } else if case .array(let list)? = fields["patch"] {
                operations += max(1, list.count)  // a model is at least one operation: a bound on how many
                jsonPatched.insert(name)
                let patch = JSON.array(list)
                edits.append(
                    Store.ModelEdits(name, ifRevision: revision) { (editor: inout ModelEditor) throws(StoreError) in
                        try editor.jsonPatch(patch)
                    })
            } else {
                throw RequestError.malformedBody("model \(name): \"patch\" is an array of JSON Patch operations")
            }
            guard operations <= limit else {
                throw StoreError.limitExceeded(.patchOperations, limit: limit, actual: operations)
            }
        }
        return (edits, jsonPatched)
    }

    /// Applies `edits` to `store` at once; a refusal names the model it came from.
    static func write(
        _ edits: (edits: [Store.ModelEdits], jsonPatched: Set<String>), to store: Store
    ) throws -> [WriteResult] {
        do throws(ModelWriteError) {
            return try store.write(edits.edits)
        } catch {
            var problem = Problem.from(error.error)
            if edits.jsonPatched.contains(error.model), case .pathNotFound(let missing) = error.error {
                problem = Problem.from(RequestError.patchNotApplicable("nothing at \"\(missing)\""))
            }
            problem.detail = "model \(error.model): " + problem.detail
            throw ProblemError(problem: problem)
        }
    }

    /// The answer to a write to several models: `{"id": last event id, "models": {name: {"id","rev"}}}`.
    static func severalWritten(_ results: [(model: String, result: WriteResult)]) -> HTTPResponse {
        var models: OrderedDictionary<String, JSON> = [:]
        var last: UInt64 = 0
        for (model, result) in results {
            models[model] = .object(["id": .string(String(result.sequence)), "rev": .int(Int(result.revision))])
            last = max(last, result.sequence)
        }
        let body = JSON.object(["id": .string(String(last)), "models": .object(models)])
        var response = HTTPResponse.bytes(body.encoded(), contentType: RequestBody.json)
        response.headers.add(Self.eventIDHeader, String(last))
        return response
    }
}
