/// Everything that can go wrong when creating, loading or running bindings.
public enum BindingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A binding entry (or one of its fields) is malformed; `position` is e.g. `bindings[2].transform`.
    case invalidSpec(position: String, reason: String)
    /// A definition file has invalid entries; every one is listed, and nothing of the file was applied.
    case invalidDefinition([BindingIssue])
    /// No transform of that name is registered.
    case unknownTransform(String)
    /// A transform parameter is missing or has the wrong type.
    case invalidParameter(transform: String, parameter: String, reason: String)
    /// A `view` transform's query is past one of the registry's ``ViewQuery/Limits`` (`bound`).
    case queryTooLarge(transform: String, parameter: String, reason: String, bound: ViewQuery.Bound)
    /// A two-way binding needs a transform that can be reversed.
    case notReversible(transform: String)
    /// The binding would close a loop of bindings that cannot settle.
    case unsettledCycle(String)
    /// A transform could not convert a value.
    case transformFailed(transform: String, reason: String)
    /// A value could not be decoded to the Swift type a closure or object binding expects.
    case decodingFailed(path: String, type: String, reason: String)
    /// Propagation went deeper than any chain of the store's bindings can without repeating itself: a loop
    /// through bindings of several registries (each refuses the loops through its own when binding), or
    /// floating-point drift round a loop of two-way bindings that its probes found to settle.
    case propagationLimit(depth: Int, at: String)
    /// A binding id is already in use.
    case duplicateID(String)
    /// No binding has this id.
    case bindingNotFound(String)
    /// The store refused a write the binding made.
    case store(StoreError)
    /// The registry already holds its most bindings (`maxBindings`).
    case tooManyBindings(limit: Int)

    /// A message a user can act on.
    public var description: String {
        switch self {
        case .tooManyBindings(let limit):
            "the registry already holds \(limit) bindings, its limit (maxBindings); remove some first"
        case .invalidSpec(let position, let reason):
            "\(position): \(reason)"
        case .invalidDefinition(let issues):
            "the definition has \(issues.count) invalid entr\(issues.count == 1 ? "y" : "ies"); nothing was applied: "
                + issues.map(\.description).joined(separator: "; ")
        case .unknownTransform(let name):
            "no transform named '\(name)' is registered (register it with TransformRegistry.register)"
        case .invalidParameter(let transform, let parameter, let reason),
            .queryTooLarge(let transform, let parameter, let reason, _):
            "transform '\(transform)': parameter '\(parameter)' \(reason)"
        case .notReversible(let transform):
            "transform '\(transform)' has no reverse, so it cannot be used in a two-way binding; use mode oneWay"
        case .unsettledCycle(let reason):
            "refused: \(reason)"
        case .transformFailed(let transform, let reason):
            "transform '\(transform)' failed: \(reason)"
        case .decodingFailed(let path, let type, let reason):
            "the value at \(path) cannot be decoded as \(type): \(reason)"
        case .propagationLimit(let depth, let at):
            "propagation stopped at \(at) after \(depth) steps, more than the store's bindings can take without going round a loop: "
                + "a loop that does not settle, through bindings of different registries (each refuses loops only among its own) "
                + "or through two-way transforms that do not quite give values back"
        case .duplicateID(let id):
            "a binding with id '\(id)' already exists"
        case .bindingNotFound(let id):
            "no binding with id '\(id)'"
        case .store(let error):
            error.description
        }
    }
}
