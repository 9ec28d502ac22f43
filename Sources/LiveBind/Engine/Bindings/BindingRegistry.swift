import Collections
import Synchronization

/// Owns the live bindings of one store: creates, lists, enables, disables and removes them, and runs
/// them from one store-wide observation.
///
/// ```swift
/// let registry = BindingRegistry(store: store)
/// try registry.bind(BindingSpec("sensor.temperature", "panel.label",
///                               transform: TransformSpec("format", ["pattern": "%.1f °C"])))
/// ```
/// Safe to call from any thread. Bindings run on the thread that delivers the store's changes (see
/// `Store.observeAll`); a binding's own writes are delivered after the current delivery finishes.
/// > Important: bindings hold the registry's store, and the registry must be kept alive for its bindings
/// > to run: when it is released, every binding stops.
public final class BindingRegistry: Sendable {
    /// How many binding writes may follow each other from one original write before propagation stops
    /// (with `BindingError.propagationLimit` as the binding's last error): the runtime loop guard.
    public static let maxPropagationDepth = 32

    /// The store the bindings read and write.
    public let store: Store
    /// Where transforms are looked up by name; register your own here.
    public let transforms: TransformRegistry

    let state = OrderedMutex(RegistryState())
    private let feed = Mutex<ObservationToken?>(nil)

    /// A registry for `store`, with its own transform registry (built-ins included) unless one is given.
    public init(store: Store, transforms: TransformRegistry = TransformRegistry()) {
        self.store = store
        self.transforms = transforms
        let observation = store.observeAll { [weak self] commit in self?.deliver(commit) }
        feed.withLock { $0 = observation }
    }

    /// Every live binding, in creation order (bindings whose Swift object is gone are removed first).
    public var all: [Binding] {
        pruneEnded()
        return state.withLock { Array($0.bindings.values) }
    }

    /// The binding with this id, or `nil`.
    public func binding(id: String) -> Binding? {
        pruneEnded()
        return state.withLock { $0.bindings[id] }
    }

    /// Creates a binding and applies the current source value to its target.
    ///
    /// Throws for an unknown transform, bad parameters, a two-way binding whose transform has no reverse,
    /// a duplicate id, or a binding that would close a cycle that cannot settle.
    @discardableResult
    public func bind(_ spec: BindingSpec) throws(BindingError) -> Binding {
        let prepared = try prepare(spec)
        let binding = try state.withLock { state throws(BindingError) in
            guard state.isFree(spec.id) else { throw .duplicateID(spec.id ?? "") }
            try BindingGraph.check(prepared, against: state.endpointBindings, store: store)
            return state.insert(prepared, store: store)
        }
        binding.perform(.resync)
        return binding
    }

    /// Creates a binding from one definition-file entry (the server's `POST /bindings`).
    @discardableResult
    public func bind(json: JSON) throws(BindingError) -> Binding {
        try bind(try BindingSpec(json: json))
    }

    /// Enables or disables a binding; a re-enabled binding catches up to the current source value.
    public func setEnabled(id: String, _ enabled: Bool) throws(BindingError) {
        guard let binding = binding(id: id) else { throw .bindingNotFound(id) }
        setEnabled(binding, enabled)
    }

    /// Removes a binding; it stops at once (a delivery already running may finish).
    public func unbind(id: String) throws(BindingError) {
        let removed = state.withLock { $0.remove(id) }
        guard removed != nil else { throw .bindingNotFound(id) }
    }

    // MARK: Internals

    func setEnabled(_ binding: Binding, _ enabled: Bool) {
        let wasEnabled = binding.state.withLock { state in
            defer { state.enabled = enabled }
            return state.enabled
        }
        if enabled && !wasEnabled { binding.perform(.resync) }
    }

    /// Makes the transform and checks what can be checked without the other bindings.
    func prepare(_ spec: BindingSpec, target: BindingTarget? = nil, sink: BindingSink? = nil) throws(BindingError) -> PreparedBinding {
        let transform: Transform?
        do {
            transform = try spec.transform.map { spec throws(BindingError) in try transforms.make(spec) }
        } catch {
            throw Self.placed(error, "transform")
        }
        if spec.mode == .twoWay, let transform, !transform.isReversible {
            throw .invalidSpec(position: "mode", reason: BindingError.notReversible(transform: transform.name).description)
        }
        if spec.each, let transform, transform.makeAggregator != nil {
            throw .invalidSpec(position: "each", reason: "'\(transform.name)' aggregates a whole array; it cannot be applied per element")
        }
        return PreparedBinding(spec: spec, target: target ?? .endpoint(spec.target), transform: transform, sink: sink)
    }

    private static func placed(_ error: BindingError, _ position: String) -> BindingError {
        let issue = BindingIssue.from(error, at: position)
        return .invalidSpec(position: issue.position, reason: issue.reason)
    }

    /// Runs every binding that reads or writes the commit's model.
    private func deliver(_ commit: Commit) {
        let bindings = state.withLock { $0.bindings(for: commit.model) }
        guard !bindings.isEmpty else { return }
        for binding in bindings { binding.perform(.commit(commit, depth: commit.depth)) }
        if bindings.contains(where: { !$0.isAlive }) { pruneEnded() }
    }

    /// Removes the bindings whose weakly held Swift object is gone.
    func pruneEnded() {
        state.withLock { state in
            for binding in state.bindings.values where !binding.isAlive { _ = state.remove(binding.id) }
        }
    }
}

/// A binding checked on its own, ready to be given an id.
struct PreparedBinding: Sendable {
    var spec: BindingSpec
    var target: BindingTarget
    var transform: Transform?
    var sink: BindingSink?
}

/// The registry's bindings and lookups, behind its lock.
struct RegistryState: Sendable {
    var bindings: OrderedDictionary<String, Binding> = [:]
    /// The bindings to run for a commit of each model (source or target model).
    var byModel: [String: [Binding]] = [:]
    var nextNumber = 1
    /// The store's id of each binding's validation rule, by binding id.
    var ruleIDs: [String: UInt64] = [:]
    /// The last `bindings(for:)` answer: commits usually come from the same model again, and comparing
    /// its name is much cheaper than hashing it.
    private var lastLookup: (model: String, bindings: [Binding])?

    /// The bindings to run for a commit of `model`.
    mutating func bindings(for model: String) -> [Binding] {
        if let lastLookup, lastLookup.model == model { return lastLookup.bindings }
        let bindings = byModel[model] ?? []
        lastLookup = (model, bindings)
        return bindings
    }

    /// The bindings between two key paths (the ones that can form cycles).
    var endpointBindings: [Binding] { bindings.values.filter { $0.sink == nil } }

    /// Whether `id` is free (`nil` ids are always free: one is picked).
    func isFree(_ id: String?) -> Bool { id.map { bindings[$0] == nil } ?? true }

    mutating func insert(_ prepared: PreparedBinding, store: Store) -> Binding {
        var id = prepared.spec.id
        while id == nil || bindings[id!] != nil {
            id = "b\(nextNumber)"
            nextNumber += 1
        }
        let binding = Binding(
            id: id!, spec: prepared.spec, target: prepared.target, transform: prepared.transform,
            sink: prepared.sink, store: store)
        bindings[binding.id] = binding
        var models = [binding.source.model]
        if let endpoint = binding.target.endpoint, endpoint.model != binding.source.model { models.append(endpoint.model) }
        for model in models { byModel[model, default: []].append(binding) }
        lastLookup = nil
        // The store checks the rule inside every write to the target, whoever makes it.
        if let validation = binding.validation, let target = binding.target.endpoint {
            ruleIDs[binding.id] = store.addRule(validation, at: target.path, in: target.model)
        }
        return binding
    }

    mutating func remove(_ id: String) -> Binding? {
        guard let binding = bindings.removeValue(forKey: id) else { return nil }
        lastLookup = nil
        for model in byModel.keys {
            byModel[model]?.removeAll { $0 === binding }
            if byModel[model]?.isEmpty == true { byModel[model] = nil }
        }
        binding.state.withLock { $0.enabled = false; $0.removed = true }
        if let rule = ruleIDs.removeValue(forKey: id), let target = binding.target.endpoint {
            binding.store.removeRule(rule, in: target.model)
        }
        return binding
    }
}
