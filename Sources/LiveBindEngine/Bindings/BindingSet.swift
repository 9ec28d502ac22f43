import OrderedCollections

/// Bindings created together, from a definition file or from code, and enabled, disabled or unbound
/// as a group.
///
/// A definition file declares models with initial values and a list of binding entries:
/// ```json
/// {"models":   {"sensor": {"temperature": 20.5, "readings": []}, "panel": {}},
///  "bindings": [{"source": "sensor.temperature", "target": "panel.label",
///                "transform": {"name": "format", "pattern": "%.1f °C"}},
///               {"source": "sensor.readings", "target": "panel.count", "transform": "count"}]}
/// ```
/// Loading is all-or-nothing: every invalid entry is reported with its position (`bindings[2].transform`)
/// and nothing of a bad file is applied. The models are created or replaced, then the bindings apply
/// their current source values.
public final class BindingSet: Sendable {
    /// The registry the bindings live in.
    public let registry: BindingRegistry
    /// The set's bindings, in the order of the entries.
    public let bindings: [Binding]

    /// Loads a definition file's bytes (UTF-8 JSON).
    public convenience init(definition bytes: some Collection<UInt8>, registry: BindingRegistry) throws(BindingError) {
        let json: JSON
        do { json = try JSON(parsing: bytes) } catch {
            throw .invalidDefinition([BindingIssue(position: "", reason: "not valid JSON: \(error)")])
        }
        try self.init(definition: json, registry: registry)
    }

    /// Loads a parsed definition (`{"models": {...}, "bindings": [...]}`).
    public convenience init(definition: JSON, registry: BindingRegistry) throws(BindingError) {
        var issues: [BindingIssue] = []
        var models: OrderedDictionary<String, JSON> = [:]
        var specs: [(BindingSpec, String)] = []
        guard case .object(let members) = definition else {
            throw .invalidDefinition([BindingIssue(position: "", reason: "expected an object with \"models\" and \"bindings\"")])
        }
        for key in members.keys where key != "models" && key != "bindings" {
            issues.append(BindingIssue(position: key, reason: "unknown member; a definition has \"models\" and \"bindings\""))
        }
        switch members["models"] {
        case nil: break
        case .object(let declared)?:
            for (name, value) in declared {
                if !Store.isValidModelName(name) {
                    issues.append(BindingIssue(position: "models.\(name)", reason: "a model name is 1 to 128 of A-Z a-z 0-9 _ - (no dots)"))
                } else if case .object = value {
                    models[name] = value
                } else {
                    issues.append(
                        BindingIssue(
                            position: "models.\(name)", reason: "a model's initial value must be an object, found \(value.typeName)"))
                }
            }
        case let other?:
            issues.append(
                BindingIssue(position: "models", reason: "must be an object of model name → initial value, found \(other.typeName)"))
        }
        switch members["bindings"] {
        case nil: break
        case .array(let entries)?:
            for (index, entry) in entries.enumerated() {
                let position = "bindings[\(index)]"
                switch BindingSpec.parse(entry, at: position) {
                case .success(let spec): specs.append((spec, position))
                case .failure(let failure): issues += failure.issues
                }
            }
        case let other?:
            issues.append(BindingIssue(position: "bindings", reason: "must be an array of binding entries, found \(other.typeName)"))
        }
        let known = Set(registry.store.modelNames().map(\.name)).union(models.keys)
        for (spec, position) in specs {
            for (end, endpoint) in [("source", spec.source), ("target", spec.target)] where !known.contains(endpoint.model) {
                issues.append(
                    BindingIssue(
                        position: "\(position).\(end)", reason: "model '\(endpoint.model)' does not exist; declare it under \"models\""))
            }
        }
        try self.init(specs: specs, models: models, registry: registry, issues: issues)
    }

    /// Creates bindings from code (and optionally models with initial values), all-or-nothing.
    public convenience init(_ specs: [BindingSpec], models: OrderedDictionary<String, JSON> = [:], registry: BindingRegistry)
        throws(BindingError)
    {
        try self.init(specs: specs.enumerated().map { ($1, "bindings[\($0)]") }, models: models, registry: registry, issues: [])
    }

    private init(
        specs: [(BindingSpec, String)], models: OrderedDictionary<String, JSON>, registry: BindingRegistry, issues: [BindingIssue]
    ) throws(BindingError) {
        var issues = issues
        var prepared: [(PreparedBinding, String)] = []
        for (spec, position) in specs {
            do { prepared.append((try registry.prepare(spec), position)) } catch {
                issues.append(BindingIssue.from(error, at: position))
            }
        }
        // Check ids and cycles for every entry (against the registry and the earlier entries) even when
        // something else is already wrong, so one load reports every problem.
        let bindings = registry.insertDisabled(prepared, issues: &issues)
        guard issues.isEmpty else { throw .invalidDefinition(issues) }
        // A model the store refuses (past its limits) undoes the models put before it: nothing applied.
        var replaced: [(name: String, previous: JSON?)] = []
        for (name, value) in models {
            let previous = try? registry.store.value(of: name)
            do {
                try registry.store.put(name, value)
                replaced.append((name, previous))
            } catch {
                for (name, previous) in replaced.reversed() {
                    if let previous { _ = try? registry.store.put(name, previous) } else { _ = try? registry.store.drop(name) }
                }
                for binding in bindings { try? registry.unbind(id: binding.id) }
                throw .invalidDefinition([BindingIssue(position: "models.\(name)", reason: error.description)])
            }
        }
        self.registry = registry
        self.bindings = bindings
        enable()
    }

    /// Whether any binding of the set is enabled.
    public var isEnabled: Bool { bindings.contains(where: \.isEnabled) }

    /// Enables every binding; each catches up to its source's current value.
    public func enable() {
        for binding in bindings { registry.setEnabled(binding, true) }
    }

    /// Disables every binding: they ignore changes until enabled again.
    public func disable() {
        for binding in bindings { registry.setEnabled(binding, false) }
    }

    /// Removes every binding of the set from its registry (safe to call twice).
    public func unbind() {
        for binding in bindings { try? registry.unbind(id: binding.id) }
    }
}

extension BindingRegistry {
    /// Inserts the bindings disabled, atomically: when any id is taken or any cycle cannot settle, the
    /// issues are appended and nothing stays inserted (nothing is inserted when `issues` was not empty).
    package func insertDisabled(_ prepared: [(PreparedBinding, String)], issues: inout [BindingIssue]) -> [Binding] {
        let inserted = insertDisabledLocked(prepared, issues: &issues)
        if inserted.contains(where: { !$0.followsPath }) { startFeed() }
        return inserted
    }

    private func insertDisabledLocked(_ prepared: [(PreparedBinding, String)], issues: inout [BindingIssue]) -> [Binding] {
        state.withLock { state in
            var inserted: [Binding] = []
            for (binding, position) in prepared {
                guard state.isFree(binding.spec.id) else {
                    issues.append(
                        BindingIssue(position: "\(position).id", reason: BindingError.duplicateID(binding.spec.id ?? "").description))
                    continue
                }
                let created: Binding
                do throws(BindingError) {
                    created = try state.insert(binding, store: store)
                } catch {
                    issues.append(BindingIssue.from(error, at: position))
                    continue
                }
                created.state.withLock { $0.enabled = false }
                inserted.append(created)
            }
            if !issues.isEmpty {
                for binding in inserted { _ = state.remove(binding.id) }
                return []
            }
            return inserted
        }
    }
}
