import Synchronization

/// One edit of the local layout, made from a server event.
enum LocalEdit {
    case put(JSON)
    case drop
    /// Sets the value, making missing parents objects.
    case set(Path, JSON)
    /// Removes the member or element, when it is there.
    case remove(Path)
    case insert(Path, Int, JSON)
    case removeElement(Path, Int)
    case replace(Path, Int, JSON)
    case move(Path, Int, Int)
}

extension ServerMirror {
    /// Applies a group of events (one id; `id` nil for a location's snapshot restating a point) to the
    /// shadow, and to the store for the models no local write waits on; then settles local writes.
    func apply(_ events: [(name: String, data: JSON)], id: String?, fresh: Bool) throws {
        var edits: [String: [LocalEdit]] = [:]
        var order: [String] = []
        var snapshotted: Set<Int> = []
        var revisions: [Int: UInt64] = [:]
        var windows: [Int: ArrayWindow] = [:]
        for (name, data) in events {
            for (index, edit) in try Self.localEdits(name, data, targets: targets) {
                let model = targets[index].localModel
                if edits[model] == nil { order.append(model) }
                edits[model, default: []].append(contentsOf: edit)
                if let revision = data["rev"].flatMap(Self.integer) { revisions[index] = UInt64(revision) }
                if name == "snapshot" { snapshotted.insert(index) }
                if let window = data["window"], let offset = window["offset"].flatMap(Self.integer),
                    let length = window["length"].flatMap(Self.integer)
                {
                    windows[index] = ArrayWindow(offset: offset, length: length)
                }
            }
        }
        if fresh, id != nil {
            // The first group of a fresh stream holds a snapshot of every model there is.
            for (index, target) in targets.enumerated() where target.path.isRoot && !snapshotted.contains(index) {
                if edits[target.localModel] == nil { order.append(target.localModel) }
                edits[target.localModel, default: []].append(target.localPath.isRoot ? .drop : .remove(target.localPath))
                revisions[index] = 0
            }
        }
        try applying.withLock { _ in
            let waiting = state.withLock { state in Set(state.pending.map(\.localModel)) }
            for model in order {
                guard let list = edits[model] else { continue }
                do {
                    try Self.apply(list, to: shadow, model: model)
                } catch {
                    throw StreamEnd.unreadable("\(model): \(error)")
                }
                if waiting.contains(model) {
                    state.withLock { _ = $0.behind.insert(model) }
                } else if (try? Store.$commitOrigin.withValue(
                    Self.ownOrigin,
                    operation: {
                        try Self.apply(list, to: store, model: model)
                    })) == nil
                {
                    reconcileLocked(model)
                }
            }
        }
        state.withLock { state in
            for (index, revision) in revisions { state.revisions[index] = revision }
            for (index, window) in windows { state.windows[index] = window }
            if let id, let number = UInt64(id) {
                state.lastEventID = id
                state.lastAppliedID = max(state.lastAppliedID, number)
                for (index, target) in targets.enumerated() where target.path.isRoot && !target.showsRows {
                    state.heard.insert(index)
                }
            }
            state.heard.formUnion(snapshotted)
            if state.heard.count == targets.count { state.synced = true }
        }
        settle()
    }

    /// The targets an event touches, and its edits of each in the local layout.
    static func localEdits(_ name: String, _ data: JSON, targets: [MirrorTarget]) throws -> [(Int, [LocalEdit])] {
        guard let model = data["model"]?.stringValue else { return [] }
        let view = data["view"]?.stringValue
        if name == "drop" {
            return targets.indices.filter { targets[$0].model == model }.map { index in
                (index, [targets[index].localPath.isRoot ? .drop : .remove(targets[index].localPath)])
            }
        }
        if name == "snapshot" {
            let path = try data["path"]?.stringValue.map { try Path(pointer: $0) } ?? .root
            guard let index = target(model, path, view: view, in: targets) else { return [] }
            let local = targets[index].localPath
            if data["exists"] == .bool(false) { return [(index, [.remove(local)])] }
            let value = data["value"] ?? .null
            return [(index, [local.isRoot ? .put(value) : .set(local, value)])]
        }
        let changes: [JSON] = name == "batch" ? Array(data["changes"]?.arrayValue ?? []) : [data]
        var found: [(Int, [LocalEdit])] = []
        for change in changes {
            let kind = name == "batch" ? change["kind"]?.stringValue ?? "" : name
            guard let pointer = change["path"]?.stringValue else { continue }
            let path = try Path(pointer: pointer)
            guard let index = target(model, path, view: view, in: targets) else { continue }
            if kind == "length" {
                found.append((index, []))
                continue
            }
            let target = targets[index]
            let local = Path(target.localPath.components + path.components.dropFirst(target.path.components.count))
            let edit: LocalEdit
            switch kind {
            case "set":
                edit = change["exists"] == .bool(false) ? .remove(local) : .set(local, change["value"] ?? .null)
            case "insert":
                edit = .insert(local, try Self.index(change, "index"), change["value"] ?? .null)
            case "remove":
                edit = change["index"] == nil ? .remove(local) : .removeElement(local, try Self.index(change, "index"))
            case "replace":
                edit = .replace(local, try Self.index(change, "index"), change["value"] ?? .null)
            case "move":
                edit = .move(local, try Self.index(change, "from"), try Self.index(change, "to"))
            default:
                continue
            }
            found.append((index, [edit]))
        }
        return found
    }

    /// The target an event at `path` of `model` belongs to: a view's by its `view`, else the target
    /// whose location holds the path.
    static func target(_ model: String, _ path: Path, view: String?, in targets: [MirrorTarget]) -> Int? {
        targets.indices.first { index in
            let target = targets[index]
            guard target.model == model else { return false }
            if let view { return target.isView && target.parameters == view && target.path.isPrefix(of: path) }
            return !target.isView && target.path.isPrefix(of: path)
        }
    }

    static func integer(_ value: JSON) -> Int? {
        if case .int(let number) = value { return number }
        return nil
    }

    static func index(_ change: JSON, _ name: String) throws -> Int {
        guard let number = change[name].flatMap(integer), number >= 0 else {
            throw StreamEnd.unreadable("a change without a valid \(name)")
        }
        return number
    }

    /// Applies `edits` of one local model to `store`, granular edits in one write.
    static func apply(_ edits: [LocalEdit], to store: Store, model: String) throws {
        var granular: [LocalEdit] = []
        func flush() throws {
            guard !granular.isEmpty else { return }
            if (try? store.value(of: model)) == nil { _ = try store.put(model, .object([:])) }
            let list = granular
            granular = []
            _ = try store.write(model) { (editor: inout ModelEditor) throws(StoreError) in
                for edit in list { try edit.apply(to: &editor) }
            }
        }
        for edit in edits {
            switch edit {
            case .put(let value):
                try flush()
                _ = try store.put(model, value)
            case .drop:
                try flush()
                if (try? store.value(of: model)) != nil { _ = try store.drop(model) }
            default:
                granular.append(edit)
            }
        }
        try flush()
    }

    /// Makes the store's copy of `model` equal to the shadow's, target by target (`applying` held).
    func reconcileLocked(_ model: String) {
        state.withLock { _ = $0.behind.remove(model) }
        Store.$commitOrigin.withValue(Self.ownOrigin) {
            for target in targets where target.localModel == model {
                let server = try? shadow.value(of: model, at: target.localPath)
                let local = try? store.value(of: model, at: target.localPath)
                guard server != local else { continue }
                let edit: LocalEdit
                if let server {
                    edit = target.localPath.isRoot ? .put(server) : .set(target.localPath, server)
                } else {
                    edit = target.localPath.isRoot ? .drop : .remove(target.localPath)
                }
                try? Self.apply([edit], to: store, model: model)
            }
        }
    }

    func reconcile(_ model: String) {
        applying.withLock { _ in reconcileLocked(model) }
    }
}

extension LocalEdit {
    func apply(to editor: inout ModelEditor) throws(StoreError) {
        switch self {
        case .put(let value):
            try editor.set(value, at: .root)
        case .drop:
            break
        case .set(let path, let value):
            var parent = Path.root
            for component in path.components.dropLast() {
                parent = parent.appending(component)
                switch try? editor.value(at: parent) {
                case .object?, .array?: continue
                default: try editor.set(.object([:]), at: parent)
                }
            }
            try editor.set(value, at: path)
        case .remove(let path):
            if !path.isRoot, (try? editor.value(at: path)) != nil { try editor.remove(at: path) }
        case .insert(let path, let index, let value):
            try editor.insert(value, at: index, in: path)
        case .removeElement(let path, let index):
            try editor.remove(at: path.appending(index: index))
        case .replace(let path, let index, let value):
            try editor.replace(at: index, in: path, with: value)
        case .move(let path, let from, let to):
            try editor.move(from: from, to: to, in: path)
        }
    }
}
