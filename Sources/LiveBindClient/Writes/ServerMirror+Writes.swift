import OrderedCollections
import DequeModule
import Foundation

extension ServerMirror {
    /// Sets `target` (a model or a location inside one this mirror holds, as written for the server:
    /// `"sensor/threshold"`) to `value`: in the store at once, then on the server with an
    /// `Idempotency-Key` and, inside a whole model, `If-Match` (`ifMatch` to choose). Returns the
    /// server's answer (`{"id","rev"}`), or nil when the write went to the offline queue. A refusal
    /// puts the server's value back in the store and throws it.
    @discardableResult
    public func set(_ value: JSON, at target: String, ifMatch: Bool? = nil) async throws(LiveBindClientError) -> JSON? {
        let (index, local) = try place(of: target, writable: true)
        let mirrored = targets[index]
        guard !state.withLock({ $0.closed }) else { throw .unreachable("the mirror was closed") }
        do {
            try Store.$commitOrigin.withValue(Self.setOrigin) {
                _ = try store.set(value, at: local, in: mirrored.localModel)
            }
        } catch {
            throw .invalidTarget("\(target): \(error)")
        }
        let server = Path(mirrored.path.components + local.components.dropFirst(mirrored.localPath.components.count))
        let outcome = await withCheckedContinuation { continuation in
            state.withLock { state in
                let write = PendingWrite(
                    number: state.nextWrite, localModel: mirrored.localModel, target: index, method: "PUT",
                    path: modelPath(mirrored.model, server), body: value, contentType: "application/json",
                    ifMatch: ifMatch ?? mirrored.path.isRoot, key: UUID().uuidString.lowercased())
                state.nextWrite += 1
                state.pending.append(write)
                state.waiters[write.number] = continuation
            }
            wake.yield()
        }
        return try outcome.get()
    }

    /// The store observer: a commit the application made inside what the mirror holds becomes writes.
    func heard(_ commit: Commit) {
        if let actor = commit.origin?.actor, actor.hasPrefix("livebind-client:") { return }
        let indices = targets.indices.filter { targets[$0].localModel == commit.model }
        guard !indices.isEmpty else { return }
        var writes: [(target: Int, method: String, path: String, body: JSON?, contentType: String)] = []
        var readOnly = false
        func location(_ index: Int, _ value: JSON?) {
            let target = targets[index]
            guard !target.showsRows else { return readOnly = true }
            let path = modelPath(target.model, target.path)
            writes.append(value.map { (index, "PUT", path, $0, "application/json") } ?? (index, "DELETE", path, nil, "application/json"))
        }
        switch commit.kind {
        case .snapshot(let value):
            for index in indices { location(index, try? value.value(at: targets[index].localPath)) }
        case .drop:
            for index in indices { location(index, nil) }
        case .changes(let changes):
            var inside: [Int: [Change]] = [:]
            var above: Set<Int> = []
            for change in changes {
                if let index = indices.first(where: { targets[$0].localPath.isPrefix(of: change.path) }) {
                    if targets[index].showsRows { readOnly = true } else { inside[index, default: []].append(change) }
                } else {
                    for index in indices where change.path.isPrefix(of: targets[index].localPath) { above.insert(index) }
                }
            }
            for index in above.sorted() {
                inside[index] = nil
                location(index, try? store.value(of: commit.model, at: targets[index].localPath))
            }
            for (index, changes) in inside.sorted(by: { $0.key < $1.key }) {
                let target = targets[index]
                let server = { (path: Path) in
                    Path(target.path.components + path.components.dropFirst(target.localPath.components.count))
                }
                if changes.count == 1, let change = changes.first, change.kind == .set {
                    writes.append(
                        (
                            index, "PUT", modelPath(target.model, server(change.path)), change.value ?? .null,
                            "application/json"
                        ))
                } else {
                    let operations = changes.flatMap { change in
                        Self.patchOperations(
                            change, at: server(change.path),
                            appends: change.kind == .insert
                                && isAppend(change, in: commit.model))
                    }
                    writes.append(
                        (
                            index, "PATCH", modelPath(target.model, .root), .array(Deque(operations)),
                            "application/json-patch+json"
                        ))
                }
            }
        }
        if readOnly {
            let model = commit.model
            Task.detached { [weak self] in
                self?.reconcile(model)
                self?.onRefusal?(.invalidTarget("\(model): windows and views are read-only; the change was put back"))
            }
        }
        guard !writes.isEmpty else { return }
        state.withLock { state in
            for write in writes {
                let target = targets[write.target]
                state.pending.append(
                    PendingWrite(
                        number: state.nextWrite, localModel: commit.model, target: write.target, method: write.method,
                        path: write.path, body: write.body, contentType: write.contentType,
                        ifMatch: target.path.isRoot, key: UUID().uuidString.lowercased()))
                state.nextWrite += 1
            }
        }
        wake.yield()
    }

    /// Whether an insert added a row at the end of the array as the application saw it (or past the
    /// server's rows): it goes as an append (`/-`), which lands whatever the server's array holds now.
    /// The end is as it was when the application committed (`Change.atEnd`): by the time this
    /// observer runs the stream may have added the server's rows after it, and a row sent to an
    /// index would land among them, where another client's delete by index could take it.
    func isAppend(_ change: Change, in model: String) -> Bool {
        guard let index = change.index else { return false }
        let server = (try? shadow.value(of: model, at: change.path))?.arrayValue?.count ?? 0
        return change.atEnd || index >= server
    }

    /// The JSON Patch operations (RFC 6902) of a change, at `path` on the server. A change to an
    /// element by its index first tests that the element there has the `id` (`key`) it had here, so a
    /// server whose array moved on refuses it (409) rather than change another row.
    static func patchOperations(_ change: Change, at path: Path, appends: Bool) -> [JSON] {
        func operation(_ op: String, _ path: Path, value: JSON? = nil, from: Path? = nil) -> JSON {
            var object: OrderedDictionary<String, JSON> = ["op": .string(op)]
            if let from { object["from"] = .string(from.pointer) }
            object["path"] = .string(path.pointer)
            if let value { object["value"] = value }
            return .object(object)
        }
        func identity(_ index: Int?) -> [JSON] {
            guard let index, let key = change.key, change.kind != .insert else { return [] }
            return [operation("test", path.appending(index: index).appending("id"), value: key)]
        }
        switch change.kind {
        case .set:
            return [operation("add", path, value: change.value ?? .null)]
        case .insert:
            return [
                operation(
                    "add", appends ? path.appending("-") : path.appending(index: change.index ?? 0),
                    value: change.value ?? .null)
            ]
        case .remove:
            return identity(change.index) + [operation("remove", change.index.map { path.appending(index: $0) } ?? path)]
        case .replace:
            return identity(change.index) + [
                operation(
                    "replace", path.appending(index: change.index ?? 0),
                    value: change.value ?? .null)
            ]
        case .move:
            return identity(change.from) + [
                operation(
                    "move", path.appending(index: change.to ?? 0),
                    from: path.appending(index: change.from ?? 0))
            ]
        }
    }

    /// Sends the waiting writes, one at a time, in the order they were made.
    func sendWrites() async {
        while let write = state.withLock({ state -> PendingWrite? in
            guard !state.closed, !state.pending.contains(where: { $0.phase == .sending }),
                let index = state.pending.firstIndex(where: { $0.phase == .waiting })
            else { return nil }
            state.pending[index].phase = .sending
            return state.pending[index]
        }) {
            let revision = write.ifMatch ? baseRevision(of: write) : nil
            if client.hasQueuedWrites {
                queue(write, ifMatch: revision)
                await flushQueue()
                continue
            }
            do {
                let answer = try await client.write(
                    write.method, write.path, body: write.body, contentType: write.contentType,
                    ifMatch: revision, key: write.key)
                _ = answered(key: write.key, .success(answer))
            } catch .unreachable where client.queue != nil {
                queue(write, ifMatch: revision)
            } catch {
                _ = answered(key: write.key, .failure(error))
            }
        }
        settle()
        settleQueued()
        if state.withLock({ $0.pending.contains { if case .waiting = $0.phase { false } else { true } } }) {
            Task.detached { [weak self] in
                try? await Task.sleep(for: .seconds(1))
                self?.wake.yield()
            }
        }
    }

    /// The revision a write was made against: the one the model's previous write made, else the
    /// server's as the stream last told it.
    func baseRevision(of write: PendingWrite) -> UInt64 {
        state.withLock { state in
            for earlier in state.pending.reversed() where earlier.number < write.number && earlier.localModel == write.localModel {
                if case .answered(_, let revision, _) = earlier.phase { return revision }
            }
            return state.revisions[write.target] ?? 0
        }
    }

    /// Puts a write in the offline queue (its value stays in the store); `set` returns nil for it. A
    /// queue that cannot keep it (no folder, a full disk) makes it fail as the server's absence would
    /// without a queue: rolled back and reported.
    func queue(_ write: PendingWrite, ifMatch: UInt64?) {
        do {
            try client.enqueue(
                write.method, write.path, body: write.body, ifMatch: ifMatch, key: write.key,
                contentType: write.contentType == "application/json" ? nil : write.contentType)
        } catch {
            _ = answered(key: write.key, .failure(error))
            return
        }
        let waiter = state.withLock { state in
            if let index = state.pending.firstIndex(where: { $0.key == write.key }) { state.pending[index].phase = .queued }
            return state.waiters.removeValue(forKey: write.number)
        }
        waiter?.resume(returning: .success(nil))
    }

    /// The server answered the write with `key` (sent now or from the queue); returns whether it is
    /// one of this mirror's. A refusal drops it and the model's later writes not sent yet, and puts
    /// the server's copy back in the store.
    func answered(key: String, _ outcome: Result<JSON, LiveBindClientError>) -> Bool {
        var resume: [(CheckedContinuation<Result<JSON?, LiveBindClientError>, Never>, Result<JSON?, LiveBindClientError>)] = []
        var refusedModel: String?
        var unheard: [LiveBindClientError] = []
        var droppedKeys: [String] = []
        let found = state.withLock { state -> Bool in
            guard let index = state.pending.firstIndex(where: { $0.key == key }) else { return false }
            let write = state.pending[index]
            switch outcome {
            case .success(let answer):
                let id = answer["id"]?.stringValue.flatMap { UInt64($0) } ?? 0
                let revision = answer["rev"].flatMap(Self.integer).map { UInt64($0) } ?? 0
                state.pending[index].phase = .answered(id: id, revision: revision, at: .now)
                if let waiter = state.waiters.removeValue(forKey: write.number) { resume.append((waiter, .success(answer))) }
            case .failure(let error):
                let later = state.pending.filter {
                    $0.localModel == write.localModel && $0.number > write.number && ($0.phase == .waiting || $0.phase == .queued)
                }
                droppedKeys = later.filter { $0.phase == .queued }.map(\.key)
                let dropped = [write.number] + later.map(\.number)
                state.pending.removeAll { dropped.contains($0.number) }
                // The model's later writes were made on top of this one: they go too, each reported.
                let following = LiveBindClientError.conflict(
                    status: error.status ?? 409,
                    problem: .object([
                        "detail": .string("an earlier write to \(write.localModel) was refused: \(error.description)")
                    ]))
                for number in dropped {
                    let reason = number == write.number ? error : following
                    if let waiter = state.waiters.removeValue(forKey: number) {
                        resume.append((waiter, .failure(reason)))
                    } else {
                        unheard.append(reason)
                    }
                }
                if !state.pending.contains(where: { $0.localModel == write.localModel }) { refusedModel = write.localModel }
            }
            return true
        }
        if !droppedKeys.isEmpty {
            // Queued writes made on top of the refused one go from the queue file too.
            _ = try? client.queue?.withEntries { entries in entries.removeAll { droppedKeys.contains($0.key) } }
        }
        if let refusedModel { reconcile(refusedModel) }
        for (waiter, result) in resume { waiter.resume(returning: result) }
        for error in unheard { onRefusal?(error) }
        settle()
        return found
    }

    /// Ends the answered writes whose events the stream has shown (or, when the stream is connected,
    /// that were answered 2 s ago: a write that changed nothing has no event); a model with no write
    /// left gets the server's copy where it differs.
    func settle() {
        let now = ContinuousClock.now
        let models = state.withLock { state -> [String] in
            let connected = state.connection != nil && state.connections > 0
            var settled: Set<String> = []
            state.pending.removeAll { write in
                guard case .answered(let id, let revision, let at) = write.phase else { return false }
                let shown =
                    state.lastAppliedID >= id || (state.revisions[write.target] ?? 0) >= revision
                    || (connected && now - at > .seconds(2))
                if shown { settled.insert(write.localModel) }
                return shown
            }
            return settled.filter { model in !state.pending.contains { $0.localModel == model } }.sorted()
        }
        for model in models { reconcile(model) }
    }
}
