import Synchronization

/// How many binding arcs (directions) the registries of one store hold, for the run-time loop guard.
///
/// Each registry refuses, when a binding is made, every loop through its own bindings that cannot
/// settle, however long. What it cannot see is a loop through bindings of two registries on the same
/// store, or rounding that keeps a loop of two-way bindings from settling although its probe values
/// came back close enough. Such a loop is recognised by its length: in a chain of binding writes (each
/// caused by the commit of the one before) that loops nowhere, each arc appears at most twice (a
/// two-way binding may first correct a value its validation coerced, then send it back), so no such
/// chain is longer than twice the arcs there are. The guard stops propagation past `loopLimit`
/// (`BindingError.propagationLimit`), so it never stops a chain the registries admitted, of any
/// length, and needs no setting.
///
/// The count is the most arcs the store's registries held at once, so that bindings removed while a
/// long chain is still propagating cannot shorten the limit under it. Shared by every registry of the
/// store (see `shared(by:)`); thread-safe.
final class BindingCensus: Sendable {
    private let current = OrderedMutex(0)
    private let peak = Atomic<Int>(0)

    /// Counts `arcs` more (or fewer, when negative).
    func add(_ arcs: Int) {
        current.withLock { current in
            current += arcs
            if current > peak.load(ordering: .relaxed) { peak.store(current, ordering: .relaxed) }
        }
    }

    /// How many arcs the store's registries hold now.
    var arcs: Int { current.withLock { $0 } }

    /// The depth past which a chain of binding writes must be a loop. Read on every propagation step:
    /// one relaxed load.
    var loopLimit: Int { 2 * peak.load(ordering: .relaxed) + 2 }

    // MARK: One census per store

    private struct Entry: Sendable {
        weak var census: BindingCensus?
    }

    /// Registries find each other's census by their store's identity. A census lives only as long as a
    /// registry or binding of its store, which hold the store, so while it lives the identity is not reused.
    private static let censuses = OrderedMutex<[ObjectIdentifier: Entry]>([:])

    /// The census of `store`'s registries, made by the first.
    static func shared(by store: Store) -> BindingCensus {
        censuses.withLock { censuses in
            let key = ObjectIdentifier(store)
            if let census = censuses[key]?.census { return census }
            censuses = censuses.filter { $0.value.census != nil }
            let census = BindingCensus()
            censuses[key] = Entry(census: census)
            return census
        }
    }
}
