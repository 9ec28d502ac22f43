// Bindings made on another node of a cluster, applied from the shared log: made and enabled without
// catching up, because the node that made them logged what catching up derived.
extension BindingRegistry {
    /// Makes the binding `definition` (an entry with its `id`) describes, enabled, without applying
    /// the source's value to the target.
    package func makeReplayed(_ definition: JSON, id: String) throws(BindingError) {
        let prepared = try prepare(try BindingSpec(json: definition))
        var issues: [BindingIssue] = []
        guard let binding = insertDisabled([(prepared, id)], issues: &issues).first else {
            throw .duplicateID(id)
        }
        binding.state.withLock { $0.enabled = true }
    }

    /// Enables or disables binding `id` without catching up.
    package func setEnabledReplayed(id: String, _ enabled: Bool) throws(BindingError) {
        guard let binding = binding(id: id) else { throw .bindingNotFound(id) }
        binding.state.withLock { $0.enabled = enabled }
    }
}

extension BindingRegistry {
    /// Catches up every enabled binding whose target is in a model `commits` changed (and every
    /// two-way binding with either end there): target := transform(source) when they differ, as enabling
    /// a binding does. The commits were derived by bindings and then refused by a cluster's log, so those
    /// targets may no longer agree with their sources.
    package func catchUp(after commits: [Commit]) {
        let models = Set(commits.map(\.model))
        guard !models.isEmpty else { return }
        for binding in all where binding.isEnabled {
            guard let target = binding.target.endpoint else { continue }
            if models.contains(target.model) || (binding.mode == .twoWay && models.contains(binding.source.model)) {
                binding.perform(.resync)
            }
        }
    }
}
