import Synchronization

/// Owns the live bindings of one store: creates, lists, enables, disables and removes them, and runs
/// them from one store-wide observation (made when the first binding needs it: a one-way binding
/// between key paths through a scalar transform observes its source path instead).
///
/// ```swift
/// let registry = BindingRegistry(store: store)
/// try registry.bind(BindingSpec("sensor.temperature", "panel.label",
///                               transform: TransformSpec("format", ["pattern": "%.1f °C"])))
/// ```
/// Safe to call from any thread. Bindings run on the thread that delivers the store's changes (see
/// `Store.observe`); a binding's own writes are delivered after every observer of the change it
/// propagates.
/// > Important: bindings hold the registry's store, and the registry must be kept alive for its bindings
/// > to run: when it is released, every binding stops.
public final class BindingRegistry: Sendable {
    /// The store the bindings read and write.
    public let store: Store
    /// Where transforms are looked up by name; register your own here.
    public let transforms: TransformRegistry

    let state: OrderedMutex<RegistryState>
    /// The store-wide observation that runs the bindings not following a path; `nil` until one is made.
    private let feed = OrderedMutex<ObservationToken?>(nil)

    /// A registry for `store`, with its own transform registry (built-ins included) unless one is given,
    /// holding at most `maxBindings` bindings at once (more are refused with `tooManyBindings`).
    public init(store: Store, transforms: TransformRegistry = TransformRegistry(), maxBindings: Int = 10_000) {
        precondition(maxBindings > 0, "maxBindings must be positive")
        self.store = store
        self.transforms = transforms
        self.state = OrderedMutex(RegistryState(census: BindingCensus.shared(by: store), maxBindings: maxBindings))
    }

    deinit {
        // Its bindings stop with it: the store's loop guard no longer counts them.
        state.withLock { state in
            state.census.add(-state.graph.arcCount)
            for binding in state.bindings.values { binding.stopFollowing() }
        }
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
            try state.insert(prepared, store: store)
        }
        if !binding.followsPath { startFeed() }
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

    package func setEnabled(_ binding: Binding, _ enabled: Bool) {
        let wasEnabled = binding.state.withLock { state in
            defer { state.enabled = enabled }
            return state.enabled
        }
        if enabled && !wasEnabled { binding.perform(.resync) }
    }

    /// Makes the transform and checks what can be checked without the other bindings.
    package func prepare(_ spec: BindingSpec, target: BindingTarget? = nil, sink: BindingSink? = nil) throws(BindingError)
        -> PreparedBinding
    {
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
        // Kept as it is, so that the server's answer names the limit passed.
        if case .queryTooLarge(let transform, let parameter, let reason, let bound) = error {
            return .queryTooLarge(transform: transform, parameter: BindingIssue.join(position, parameter), reason: reason, bound: bound)
        }
        let issue = BindingIssue.from(error, at: position)
        return .invalidSpec(position: issue.position, reason: issue.reason)
    }

    /// Starts the store-wide observation unless it runs already. A commit made before it started is
    /// caught up by the resync that follows.
    func startFeed() {
        feed.withLock { feed in
            guard feed == nil else { return }
            feed = store.observeAll { [weak self] commit in self?.deliver(commit) }
        }
    }

    /// Runs every binding that reads or writes what the commit changed.
    private func deliver(_ commit: Commit) {
        // Replayed from a cluster's log: the node that made it ran the bindings already.
        guard commit.depth != Store.replayedDepth else { return }
        let bindings = state.withLock { $0.bindings(for: commit) }
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
package struct PreparedBinding: Sendable {
    var spec: BindingSpec
    var target: BindingTarget
    var transform: Transform?
    var sink: BindingSink?
}
