import DequeModule
import Synchronization

/// One live binding: inspectable (source, target, mode, transform, enabled, fire count, last error)
/// and owned by a `BindingRegistry`, which creates it with `bind` and removes it with `unbind`.
///
/// Thread-safe. Its propagation runs serially: work that arrives while it runs (a store delivery, a
/// re-enable, a value from a Swift object) is queued and run by the same thread right after.
public final class Binding: Sendable {
    /// Unique within its registry; chosen by the spec or `b1`, `b2`, ….
    public let id: String
    /// Where values come from.
    public let source: BindingEndpoint
    /// Where values go.
    public let target: BindingTarget
    /// One-way or two-way.
    public let mode: BindingMode
    /// The transform as specified (name and parameters), or `nil`.
    public let transformSpec: TransformSpec?
    /// The rule for values written into the target, or `nil`.
    public let validation: Validation?
    /// Whether the transform applies per element of a source array.
    public let each: Bool

    let transform: Transform?
    let sink: BindingSink?
    let store: Store
    /// The store's binding census, whose `loopLimit` stops loops across registries.
    let census: BindingCensus
    let state: OrderedMutex<BindingState>

    init(
        id: String, spec: BindingSpec, target: BindingTarget, transform: Transform?, sink: BindingSink?, store: Store,
        census: BindingCensus
    ) {
        self.id = id
        self.source = spec.source
        self.target = target
        self.mode = spec.mode
        self.transformSpec = spec.transform
        self.validation = spec.validation
        self.each = spec.each
        self.transform = transform
        self.sink = sink
        self.store = store
        self.census = census
        self.state = OrderedMutex(BindingState(aggregator: transform?.makeAggregator?()))
    }

    /// Whether it propagates; a disabled binding ignores changes and catches up when enabled again.
    public var isEnabled: Bool { state.withLock { $0.enabled } }
    /// How many times it propagated a value (either way).
    public var fireCount: Int { state.withLock { $0.fireCount } }
    /// The last failure (transform, validation, store write, loop guard), or `nil`.
    public var lastError: BindingError? { state.withLock { $0.lastError } }
    /// Whether its registry removed it (`unbind`, or its Swift object went away).
    public var isRemoved: Bool { state.withLock { $0.removed } }
    /// `false` once the Swift object it writes into is gone (it is then removed from its registry).
    public var isAlive: Bool { sink?.isAlive() ?? true }

    /// The array mirror and aggregate modes keep a copy of the source array and follow granular changes.
    var followsArray: Bool { transform?.makeAggregator != nil || transform?.view != nil || each || (transform == nil && sink == nil) }
}

/// The mutable part of a binding, behind its lock.
struct BindingState: Sendable {
    var enabled = true
    var fireCount = 0
    var lastError: BindingError?
    /// Commits up to this order (`StoreState.order(of:)`) are already reflected in what was sent forward.
    var sourceSynced: UInt64 = 0
    /// Commits up to this order are already reflected in what was sent back (two-way).
    var targetSynced: UInt64 = 0
    /// The source array as last seen (array mirror and aggregate modes), `nil` when it is not an array.
    var shadow: Deque<JSON>?
    /// The incremental state of an aggregate transform.
    var aggregator: (any Aggregator)?
    /// The arranged source array of a view transform.
    var arranged: ArrangedBox?
    /// Set when the target may no longer mirror the source: the next change syncs it whole.
    var needsFullSync = false
    /// Set when its registry removed it: it never runs again.
    var removed = false
    /// Work waiting for the thread that is running this binding.
    var queue: Deque<BindingWork> = []
    var busy = false
    /// The store observation of the source, for a binding that follows it by path (`followsPath`).
    var following: ObservationToken?

    init(aggregator: (any Aggregator)?) { self.aggregator = aggregator }
}

/// One unit of propagation work.
enum BindingWork: Sendable {
    /// A store commit, with the propagation depth of the write that made it.
    case commit(Commit, depth: Int)
    /// A change heard by the source's path observer (`followsPath`), with its commit's order and depth.
    case change(Change, ChangeStamp)
    /// Apply the current source value (when created and when re-enabled).
    case resync
    /// A new value read from a Swift object (two-way object bindings): write it back to the source.
    case objectValue(JSON)
}

/// A view binding's arranged array, kept in its state: only the thread running the binding uses it
/// (`BindingState.busy`), as it does the shadow copy.
final class ArrangedBox: @unchecked Sendable {
    let array: ArrangedArray

    init(_ array: ArrangedArray) {
        self.array = array
    }
}
