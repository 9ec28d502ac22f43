import OrderedCollections

/// The registry's bindings and lookups, behind its lock.
struct RegistryState: Sendable {
    var bindings: OrderedDictionary<String, Binding> = [:]
    /// The bindings to run for a commit of each model (source or target model), except those that follow
    /// their source by path (`Binding.followsPath`), which the store runs itself.
    var byModel: [String: ModelBindings] = [:]
    /// The bindings between key paths, for the cycle check.
    var graph = BindingGraph()
    var nextNumber = 1
    /// The store's id of each binding's validation rule, by binding id.
    var ruleIDs: [String: UInt64] = [:]
    /// Counts this registry's arcs for the store's run-time loop guard.
    let census: BindingCensus
    /// The model of the last `bindings(for:)` answer: commits usually come from the same model again,
    /// and comparing its name is much cheaper than hashing it.
    private var lastModel: String?
    private var lastBindings = ModelBindings()

    /// Most bindings held at once.
    let maxBindings: Int

    init(census: BindingCensus, maxBindings: Int) {
        self.census = census
        self.maxBindings = maxBindings
    }

    /// The bindings to run for `commit`: every binding of its model that the commit may touch.
    mutating func bindings(for commit: Commit) -> [Binding] {
        if lastModel != commit.model {
            lastBindings = byModel[commit.model] ?? ModelBindings()
            lastModel = commit.model
        }
        return lastBindings.touched(by: commit)
    }

    /// Whether `id` is free (`nil` ids are always free: one is picked).
    func isFree(_ id: String?) -> Bool { id.map { bindings[$0] == nil } ?? true }

    /// Makes the binding, with the spec's id or the next free `bN`. Throws `duplicateID` when the spec's id
    /// is taken and `unsettledCycle` when it would close a loop of bindings that cannot settle; a refused
    /// binding changes nothing.
    mutating func insert(_ prepared: PreparedBinding, store: Store) throws(BindingError) -> Binding {
        guard bindings.count < maxBindings else { throw .tooManyBindings(limit: maxBindings) }
        // One lookup per id tried: `bindings` is an ordered dictionary, whose lookups cost several times a
        // `Dictionary`'s in a debug build.
        var id: String
        var number = nextNumber
        if let given = prepared.spec.id {
            guard BindingSpec.isValidID(given) else { throw .invalidSpec(position: "id", reason: "must be \(BindingSpec.idRule)") }
            guard bindings[given] == nil else { throw .duplicateID(given) }
            id = given
        } else {
            repeat {
                id = "b\(number)"
                number += 1
            } while bindings[id] != nil
        }
        let edge = Self.edge(prepared.spec, prepared.target, prepared.transform, prepared.sink)
        var slot: Int?
        if let edge { slot = try graph.insertChecked(edge, store: store) }
        nextNumber = number
        let binding = Binding(
            id: id, spec: prepared.spec, target: prepared.target, transform: prepared.transform,
            sink: prepared.sink, store: store, census: census)
        // Drop the cached copy first, so that the model's lists below are edited in place, not copied.
        forgetLastLookup()
        bindings[binding.id] = binding
        if binding.followsPath {
            binding.startFollowing()
        } else {
            byModel[binding.source.model, default: ModelBindings()].insert(binding, in: binding.source.model)
            if let model = binding.target.endpoint?.model, model != binding.source.model {
                byModel[model, default: ModelBindings()].insert(binding, in: model)
            }
        }
        if let edge, let slot {
            graph.name(slot, id: binding.id)
            census.add(BindingGraph.arcs(of: edge))
        }
        // The store checks the rule inside every write to the target, whoever makes it.
        if let validation = binding.validation, let target = binding.target.endpoint {
            ruleIDs[binding.id] = store.addRule(validation, at: target.path, in: target.model, elements: binding.each)
        }
        return binding
    }

    mutating func remove(_ id: String) -> Binding? {
        guard let binding = bindings.removeValue(forKey: id) else { return nil }
        forgetLastLookup()
        for model in [binding.source.model, binding.target.endpoint?.model ?? binding.source.model] {
            byModel[model]?.remove(binding)
            if byModel[model]?.all.isEmpty == true { byModel[model] = nil }
        }
        let arcs = graph.arcCount
        graph.remove(id: id)
        census.add(graph.arcCount - arcs)
        binding.state.withLock {
            $0.enabled = false; $0.removed = true
        }
        binding.stopFollowing()
        if let rule = ruleIDs.removeValue(forKey: id), let target = binding.target.endpoint {
            binding.store.removeRule(rule, in: target.model)
        }
        return binding
    }

    private mutating func forgetLastLookup() {
        lastModel = nil
        lastBindings = ModelBindings()
    }

    /// The graph's view of a binding between two key paths; `nil` for closure and object bindings.
    private static func edge(_ spec: BindingSpec, _ target: BindingTarget, _ transform: Transform?, _ sink: BindingSink?) -> BindingGraph
        .Edge?
    {
        guard sink == nil, let endpoint = target.endpoint else { return nil }
        return BindingGraph.Edge(source: spec.source, target: endpoint, twoWay: spec.mode == .twoWay, transform: transform, each: spec.each)
    }
}

/// The bindings with an endpoint in one model, indexed by the first component of the endpoint's path,
/// so that a commit in a model with many bindings runs only the few whose paths it can touch (a chain
/// `c.v0 → c.v1 → …` costs each step two bindings, not all of them).
struct ModelBindings: Sendable {
    /// Up to this many bindings, every commit runs all of them: each checks cheaply whether the commit
    /// touches it, and no lookup is paid on the common path.
    static let indexedFrom = 8

    /// Every binding with an endpoint in the model, in creation order.
    private(set) var all: [Binding] = []
    /// The bindings with an endpoint at the model's root: every change touches them.
    private var atRoot: [Binding] = []
    /// For each first path component, the bindings with an endpoint under it and the ones in `atRoot`,
    /// in creation order.
    private var byKey: [String: [Binding]] = [:]

    /// The bindings `commit` may touch (a superset: each binding checks its paths itself).
    func touched(by commit: Commit) -> [Binding] {
        guard all.count > Self.indexedFrom, case .changes(let changes) = commit.kind,
            let key = changes.first?.path.components.first
        else { return all }
        for change in changes.dropFirst() where change.path.components.first != key { return all }
        return byKey[key] ?? atRoot
    }

    mutating func insert(_ binding: Binding, in model: String) {
        all.append(binding)
        let source = binding.source.model == model ? binding.source.path : nil
        let target = binding.target.endpoint.flatMap { $0.model == model ? $0.path : nil }
        if source?.isRoot == true || target?.isRoot == true {
            atRoot.append(binding)
            for key in byKey.keys { byKey[key]!.append(binding) }
            return
        }
        let first = source?.components.first, second = target?.components.first
        if let first { byKey[first, default: atRoot].append(binding) }
        if let second, second != first { byKey[second, default: atRoot].append(binding) }
    }

    mutating func remove(_ binding: Binding) {
        all.removeAll { $0 === binding }
        atRoot.removeAll { $0 === binding }
        for key in Array(byKey.keys) {
            byKey[key]!.removeAll { $0 === binding }
            // A bucket of only root bindings says nothing `atRoot` does not.
            if byKey[key]!.count == atRoot.count { byKey[key] = nil }
        }
    }
}
