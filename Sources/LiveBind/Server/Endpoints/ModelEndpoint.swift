import LiveBindEngine
internal import LiveBindHTTP
/// `/models` and `/models/{name}/{pointer}`: models as HTTP resources.
///
/// Every write is one atomic store commit and answers `{"id": "<event id>", "rev": N}` (plus `index`
/// for appends). Writes are conditional on `If-Match: "<rev>"`, or on `If-None-Match: *` for a whole
/// model (create only). Reads carry `ETag: "<rev>"` and `LiveBind-Event-ID` (the event id they were taken at).
///
/// Values pass the validation rules of the bindings whose targets they touch inside the store's commit
/// (every write path does): a rejected value is a 422, a coerced one is written coerced.
struct ModelEndpoint: Sendable {
    let store: Store
    let counters: ServerCounters

    /// The header naming the event id a snapshot or write corresponds to.
    static let eventIDHeader = "LiveBind-Event-ID"

    /// `GET /models[?after=name]`: the name and revision of every model the caller reaches, by name,
    /// in pages of at most `maxBytes` (`--max-list-bytes`) that end with `"next"` when more remain.
    func list(reach: AccessControl.Reach = .everything, after: String? = nil, maxBytes: Int = .max) -> HTTPResponse {
        let names = store.visibleModelNames().filter { reach.covers($0.name) }
        return ListPage.make("models", names, key: \.name, after: after, maxBytes: maxBytes) { model, bytes in
            bytes += #"{"name":"#.utf8
            JSON.string(model.name).encode(into: &bytes)
            bytes += #","rev":\#(model.revision)}"#.utf8
        }
    }

    /// `GET /models/{name}{pointer}`: the document or the value at the pointer, from one consistent cut.
    func get(_ name: String, _ pointer: String) throws -> HTTPResponse {
        let path = try Path(pointer: pointer)
        let cut = store.visibleSnapshot(models: [name])
        guard let snapshot = cut.models.first else { throw StoreError.modelNotFound(name) }
        let value: JSON
        do {
            value = try snapshot.value.value(at: path)
        } catch .indexOutOfRange, .typeMismatch {
            // Reading: a pointer past an array's end or into a scalar names nothing.
            throw StoreError.pathNotFound(path)
        }
        var response = HTTPResponse.bytes(value.encoded(), contentType: RequestBody.json)
        response.headers.add("ETag", "\"\(snapshot.revision)\"")
        response.headers.add(Self.eventIDHeader, "\(cut.sequence)")
        return response
    }

    /// `PUT`, `DELETE`, `PATCH` or `POST` on `/models/{name}{pointer}`; an insert's answer has its
    /// `index` when `revealsIndex` (see `post`).
    func write(_ name: String, _ pointer: String, _ request: HTTPRequest, revealsIndex: Bool = true) throws -> HTTPResponse {
        switch request.method {
        case .put: try put(name, pointer, request, revealsIndex: revealsIndex)
        case .delete: try delete(name, pointer, request)
        case .patch: try patch(name, pointer, request, revealsIndex: revealsIndex)
        default: try post(name, pointer, request, revealsIndex: revealsIndex)
        }
    }

    /// `PUT`: creates or replaces a model (201/200), or sets the value at a pointer.
    func put(_ name: String, _ pointer: String, _ request: HTTPRequest, revealsIndex: Bool = true) throws -> HTTPResponse {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        let path = try Path(pointer: pointer)
        let value = try RequestBody.parseJSON(request)
        let revision = try condition(request, name, at: path)
        if path == .root {
            let (created, result) = try store.put(name, value, ifRevision: revision)
            var response = written(result, status: created ? 201 : 200)
            if created { response.headers.add("Location", "/models/\(name)") }
            return response
        }
        var result = try store.set(value, at: path, in: name, ifRevision: revision)
        if !revealsIndex { result.index = nil }
        return written(result)
    }

    /// `DELETE`: drops a model, or removes a member or array element.
    func delete(_ name: String, _ pointer: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let path = try Path(pointer: pointer)
        let revision = try condition(request, name, at: path)
        if path == .root { return written(try store.drop(name, ifRevision: revision)) }
        return written(try store.remove(at: path, in: name, ifRevision: revision))
    }

    /// `PATCH`: RFC 7386 merge patch at the pointer, or RFC 6902 JSON Patch on the model.
    func patch(_ name: String, _ pointer: String, _ request: HTTPRequest, revealsIndex: Bool = true) throws -> HTTPResponse {
        let type = try RequestBody.mediaType(of: request, accepted: [RequestBody.mergePatch, RequestBody.jsonPatch])
        let body = try RequestBody.parseJSON(request)
        let path = try Path(pointer: pointer)
        let revision = try condition(request, name, at: path)
        if type == RequestBody.mergePatch {
            var result = try store.mergePatch(body, at: path, in: name, ifRevision: revision)
            if !revealsIndex { result.index = nil }
            return written(result)
        }
        guard path == .root else {
            throw RequestError.badRequest("a JSON Patch applies to the whole model: PATCH /models/\(name) with paths inside the operations")
        }
        do {
            var result = try store.jsonPatch(body, in: name, ifRevision: revision)
            // The index of whichever operation inserted last says nothing about the patch: no `index`.
            result.index = nil
            return written(result)
        } catch StoreError.pathNotFound(let missing) {
            // The model exists, so this is not a 404: an operation names a location the model lacks.
            throw RequestError.patchNotApplicable("nothing at \"\(missing)\"")
        }
    }

    /// `POST`: JSON appends to an array or merges into an object; a form sets each dotted key path. An
    /// append's answer has the new element's `index` when `revealsIndex` (it is the array's length,
    /// which a caller who may not read the model does not get).
    func post(_ name: String, _ pointer: String, _ request: HTTPRequest, revealsIndex: Bool = true) throws -> HTTPResponse {
        let type = try RequestBody.mediaType(of: request, accepted: [RequestBody.json, RequestBody.form])
        let base = try Path(pointer: pointer)
        let revision = try condition(request, name, at: base)
        if type == RequestBody.form { return try postForm(name, base, request, revision) }
        let value = try RequestBody.parseJSON(request)
        var appendedAt: Int?
        var result = try store.write(name, ifRevision: revision) { (editor: inout ModelEditor) throws(StoreError) in
            // Only the kind is kept: a `switch` holds its subject, a second reference to the array or
            // object, to its end, and the edit would then copy all of it (O(n) per append).
            let isArray: Bool
            switch try editor.value(at: base) {
            case .array: isArray = true
            case .object: isArray = false
            case let other: throw .typeMismatch(path: base, expected: "array or object", found: other.typeName)
            }
            if isArray { appendedAt = try editor.append(value, to: base) } else { try editor.mergePatch(value, at: base) }
        }
        result.index = revealsIndex ? appendedAt : nil
        return written(result)
    }

    /// The revision a write at `path` is conditional on: `If-Match: "<rev>"`, or, for `If-None-Match: *`
    /// on a whole model, 0, which the store reads as "must not exist yet" (RFC 9110 section 13.1.2:
    /// create only, 412 when the model exists). Without it a client's create-only `PUT` would replace
    /// the model it meant not to touch. Other `If-None-Match` values, and `*` at a pointer (whose ETag
    /// is the model's revision), are refused (400) rather than ignored.
    /// What a write's preconditions ask of model `name`'s revision (see `precondition`). `If-Match: *`
    /// holds only when the model exists (RFC 9110 13.1.1): it asks for the revision the model has now,
    /// which the write checks again atomically (a change in between is a 412, as for any other tag).
    private func condition(_ request: HTTPRequest, _ name: String, at path: Path) throws -> UInt64? {
        let revision = try Self.precondition(request, at: path)
        guard request.headers["If-Match"]?.trimmingWhitespace() == "*" else { return revision }
        guard let model = store.visibleSnapshot(models: [name]).models.first else { throw RequestError.nothingToMatch(name) }
        return model.revision
    }

    static func precondition(_ request: HTTPRequest, at path: Path) throws(RequestError) -> UInt64? {
        let revision = try RequestBody.ifMatch(request)
        guard let noneMatch = request.headers["If-None-Match"]?.trimmingWhitespace() else { return revision }
        guard noneMatch == "*", path == .root, request.headers["If-Match"] == nil else {
            throw RequestError.badRequest(
                "on a write, If-None-Match takes only * on a whole model, without If-Match: PUT /models/{name} with If-None-Match: * creates the model only if it does not exist; at a pointer, use If-Match or a JSON Patch test"
            )
        }
        return 0
    }

    private func postForm(
        _ name: String, _ base: Path, _ request: HTTPRequest,
        _ revision: UInt64?
    ) throws -> HTTPResponse {
        let pairs = try FormDecoding.pairs(request.body)
        guard !pairs.isEmpty else { throw RequestError.malformedBody("empty form: send key=value pairs") }
        var edits: [(Path, JSON)] = []
        for (key, text) in pairs {
            let relative = try Path(dotted: key)
            guard relative != .root else { throw RequestError.malformedBody("empty key in form data") }
            // One append of all components: `appending` one at a time copies the path each time, which
            // made a key of n components cost n² (a 10,000-component key took most of a second).
            var path = base
            path.components.append(contentsOf: relative.components)
            let value = (try? JSON(parsing: text)) ?? .string(text)
            edits.append((path, value))
        }
        let result = try store.write(name, ifRevision: revision) { (editor: inout ModelEditor) throws(StoreError) in
            for (path, value) in edits { try Self.set(value, at: path, creatingParents: &editor) }
        }
        return written(result)
    }

    /// Sets `value`, first creating missing parent members as empty objects (`meta.unit=C` on `{}`).
    ///
    /// Walks down from the root instead of recursing up from the key: a form key may have thousands of
    /// components, and the store's depth limit refuses the first parent too deep.
    private static func set(_ value: JSON, at path: Path, creatingParents editor: inout ModelEditor) throws(StoreError) {
        var existing = 0
        while existing < path.components.count - 1 {
            do {
                _ = try editor.value(at: path.prefix(existing + 1))
            } catch .pathNotFound {
                break
            }
            existing += 1
        }
        for depth in (existing + 1)..<max(existing + 1, path.components.count) {
            try editor.set(.object([:]), at: path.prefix(depth))
        }
        try editor.set(value, at: path)
    }

    /// The answer to every successful write, written straight into its bytes: every write pays it.
    private func written(_ result: WriteResult, status: Int = 200) -> HTTPResponse {
        counters.writes.add(1, ordering: .relaxed)
        return Self.written(result, status: status)
    }

    /// The answer to the write whose commit left `receipt` (see `IdempotencyTable`): 201 with
    /// `Location` when it may have created the model (`flags` has `c`) and did (revision 1), the
    /// inserted index when its answer shows one (`flags` has `i`); a write to several models' answer
    /// (`flags` has `s`) from the results its tag carries.
    static func answer(_ receipt: CommitReceipt, flags: String) -> IdempotencyTable.Answer {
        if flags.contains("s"), let newline = receipt.tag.firstIndex(of: "\n"),
            let results = Store.unitResults(parsing: receipt.tag[receipt.tag.index(after: newline)...])
        {
            return IdempotencyTable.Answer(severalWritten(results)) ?? .init(status: 200, body: [], headers: [])
        }
        let created = flags.contains("c") && receipt.revision == 1
        let result = WriteResult(
            sequence: receipt.sequence, revision: receipt.revision,
            index: flags.contains("i") ? receipt.insertIndex : nil, changed: true)
        var response = written(result, status: created ? 201 : 200)
        if created { response.headers.add("Location", "/models/\(receipt.model)") }
        guard case .bytes(let body) = response.body else { return .init(status: response.status, body: [], headers: []) }
        return .init(status: response.status, body: body, headers: response.headers.fields.map { ($0.name, $0.value) })
    }

    private static func written(_ result: WriteResult, status: Int) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(64)
        body += #"{"id":""#.utf8
        body.appendDecimal(result.sequence)
        body += #"","rev":"#.utf8
        body.appendDecimal(result.revision)
        if let index = result.index {
            body += #","index":"#.utf8
            body.appendDecimal(index)
        }
        body.append(UInt8(ascii: "}"))
        var response = HTTPResponse.bytes(body, status: status, contentType: RequestBody.json)
        response.headers.add("ETag", "\"\(result.revision)\"")
        response.headers.add(Self.eventIDHeader, String(result.sequence))
        return response
    }
}
