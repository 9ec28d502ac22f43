// Bindings made on another node of a cluster, applied from the shared log: made and enabled without
// catching up, because the node that made them logged what catching up derived.
extension BindingRegistry {
    /// Makes the binding `definition` (an entry with its `id`) describes, enabled, without applying
    /// the source's value to the target.
    func makeReplayed(_ definition: JSON, id: String) throws(BindingError) {
        let prepared = try prepare(try BindingSpec(json: definition))
        var issues: [BindingIssue] = []
        guard let binding = insertDisabled([(prepared, id)], issues: &issues).first else {
            throw .duplicateID(id)
        }
        binding.state.withLock { $0.enabled = true }
    }

    /// Enables or disables binding `id` without catching up.
    func setEnabledReplayed(id: String, _ enabled: Bool) throws(BindingError) {
        guard let binding = binding(id: id) else { throw .bindingNotFound(id) }
        binding.state.withLock { $0.enabled = enabled }
    }
}
