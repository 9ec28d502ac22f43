/// Where a change stands in the store's history, for the observers that need more than the change:
/// the bindings that follow a path (see `Store.observeStamped`).
struct ChangeStamp: Sendable {
    /// The order of the commit that made the change (`StoreState.order(of:)`: its sequence, unless
    /// rollbacks gave sequence numbers back).
    var order: UInt64
    /// How deep in a chain of binding writes the change was made (0: not by a binding). A binding
    /// writes at one more than the change it is propagating, so that a loop through bindings of several
    /// registries, each unaware of the others' bindings, is stopped (see `BindingCensus.loopLimit`).
    var depth: Int
}
