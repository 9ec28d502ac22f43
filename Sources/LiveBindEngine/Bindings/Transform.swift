import DequeModule

/// A value conversion used by bindings: forward (source → target) and optionally reverse.
///
/// Built-ins come from `TransformRegistry`; write your own with `Transform(name:forward:reverse:)` and
/// register a factory for it. Array aggregates (`count`, `sum`, …) carry an `Aggregator` factory instead,
/// so a binding can keep the result up to date from granular array changes.
public struct Transform: Sendable {
    /// The name it was made under (for messages and descriptions).
    public var name: String
    /// Source value → target value.
    public var forward: @Sendable (JSON) throws -> JSON
    /// Target value → source value, or `nil` when the transform cannot be reversed.
    public var reverse: (@Sendable (JSON) throws -> JSON)?
    /// For array aggregates: makes the incremental state one binding keeps.
    public var makeAggregator: (@Sendable () -> any Aggregator)?
    /// For a view of an array (`view`): its query; the binding keeps the array arranged and writes
    /// the shown rows' changes into its target array, row by row.
    public var view: ViewQuery?
    /// Typical inputs, used to check at bind time that a cycle of bindings composes to the identity.
    public var samples: [JSON]

    /// A transform from closures.
    public init(
        name: String, samples: [JSON] = [], forward: @escaping @Sendable (JSON) throws -> JSON,
        reverse: (@Sendable (JSON) throws -> JSON)? = nil
    ) {
        self.name = name
        self.forward = forward
        self.reverse = reverse
        self.makeAggregator = nil
        self.samples = samples
    }

    /// An array aggregate: `forward` computes it from a whole array; the aggregator keeps it up to date.
    public init(name: String, aggregator: @escaping @Sendable () -> any Aggregator) {
        self.name = name
        self.forward = { value throws in
            guard case .array(let elements) = value else {
                throw BindingError.transformFailed(transform: name, reason: "expected an array, found \(value.typeName)")
            }
            var state = aggregator()
            state.reset(elements)
            return state.result
        }
        self.reverse = nil
        self.makeAggregator = aggregator
        self.samples = []
    }

    /// A view of an array (docs/Bindings.md, "Views"): `forward` arranges a whole array; a binding
    /// keeps it arranged from the source's granular changes.
    public init(view query: ViewQuery) {
        self.name = "view"
        self.forward = { value throws in
            guard case .array(let elements) = value else {
                throw BindingError.transformFailed(transform: "view", reason: "expected an array, found \(value.typeName)")
            }
            return .array(Deque(query.arrangedByFullSort(Array(elements)).rows))
        }
        self.reverse = nil
        self.makeAggregator = nil
        self.view = query
        self.samples = []
    }

    /// Whether a two-way binding may use it.
    public var isReversible: Bool { reverse != nil }

    /// `forward`, with failures as `BindingError.transformFailed`.
    func applyForward(_ value: JSON) throws(BindingError) -> JSON {
        do { return try forward(value) } catch { throw Self.wrap(error, name) }
    }

    /// `reverse`, with failures as `BindingError.transformFailed`.
    func applyReverse(_ value: JSON) throws(BindingError) -> JSON {
        guard let reverse else { throw .notReversible(transform: name) }
        do { return try reverse(value) } catch { throw Self.wrap(error, name) }
    }

    private static func wrap(_ error: any Error, _ name: String) -> BindingError {
        if let error = error as? BindingError { return error }
        return .transformFailed(transform: name, reason: "\(error)")
    }
}

/// Incremental state of an array aggregate, fed with the granular changes of the source array.
///
/// `elements` is the source array after the change, for the rare rescan (e.g. the minimum was removed).
/// It is the binding's own copy, passed without copying, so following a long array stays cheap.
public protocol Aggregator: Sendable {
    /// Starts over from a whole array.
    mutating func reset(_ elements: Deque<JSON>)
    /// `element` was inserted.
    mutating func insert(_ element: JSON, elements: Deque<JSON>)
    /// `element` was removed.
    mutating func remove(_ element: JSON, elements: Deque<JSON>)
    /// `old` was replaced by `new`.
    mutating func replace(_ old: JSON, with new: JSON, elements: Deque<JSON>)
    /// The current result.
    var result: JSON { get }
    /// How many times the state was rebuilt by scanning the whole array (for tests and diagnostics).
    var rescans: Int { get }
}
