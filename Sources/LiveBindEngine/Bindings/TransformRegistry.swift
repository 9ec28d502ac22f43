import OrderedCollections
import Synchronization

/// Named transform factories: the built-ins plus whatever an app registers.
///
/// Built-ins: `format`, `scale`, `not`, `threshold`, `lookup`, `identity`, and the array aggregates
/// `count`, `sum`, `avg`, `min`, `max` (each takes an optional `of`: a dotted path inside every element).
/// Safe to use from any thread.
public final class TransformRegistry: Sendable {
    /// Makes a transform from the parameters written next to its name.
    public typealias Factory = @Sendable (TransformParameters) throws(BindingError) -> Transform

    private let factories: OrderedMutex<[String: Factory]>

    /// A registry with the built-ins (or empty, for `builtins: false`); the `view` transform refuses
    /// queries past `viewLimits`.
    public init(builtins: Bool = true, viewLimits: ViewQuery.Limits = ViewQuery.Limits()) {
        factories = OrderedMutex([:])
        if builtins { registerBuiltins(viewLimits: viewLimits) }
    }

    /// Registers (or replaces) a transform factory under `name`.
    public func register(_ name: String, _ factory: @escaping Factory) {
        precondition(!name.isEmpty, "a transform needs a name")
        factories.withLock { $0[name] = factory }
    }

    /// Registers a transform without parameters (its `name` is the registered name).
    public func register(_ transform: Transform) {
        register(transform.name) { _ in transform }
    }

    /// Every registered name, sorted.
    public var names: [String] { factories.withLock { $0.keys.sorted() } }

    /// Makes the transform a spec names; throws for an unknown name or bad parameters.
    public func make(_ spec: TransformSpec) throws(BindingError) -> Transform {
        guard let factory = factories.withLock({ $0[spec.name] }) else { throw .unknownTransform(spec.name) }
        return try factory(TransformParameters(transform: spec.name, values: spec.parameters))
    }
}

/// The parameters of one transform entry, with typed accessors that throw precise errors.
public struct TransformParameters: Sendable {
    /// The transform's name (for error messages).
    public let transform: String
    /// Every parameter as written.
    package let values: OrderedDictionary<String, JSON>
    /// The parameters' names, in the order written.
    public var names: [String] { Array(values.keys) }

    /// The raw parameter.
    public subscript(key: String) -> JSON? { values[key] }

    /// A number parameter, or `defaultValue` when absent (`nil` default: required).
    public func number(_ key: String, default defaultValue: Double? = nil) throws(BindingError) -> Double {
        guard let value = values[key] else {
            guard let defaultValue else { throw missing(key, "a number") }
            return defaultValue
        }
        guard let number = value.doubleValue else { throw wrongType(key, "a number", value) }
        return number
    }

    /// A string parameter, or `defaultValue` when absent (`nil` default: required).
    public func string(_ key: String, default defaultValue: String? = nil) throws(BindingError) -> String {
        guard let value = values[key] else {
            guard let defaultValue else { throw missing(key, "a string") }
            return defaultValue
        }
        guard let text = value.stringValue else { throw wrongType(key, "a string", value) }
        return text
    }

    /// Throws for any parameter not in `known`, so typos are reported instead of ignored.
    public func allowOnly(_ known: Set<String>) throws(BindingError) {
        if let unknown = values.keys.first(where: { !known.contains($0) }) {
            throw .invalidParameter(
                transform: transform, parameter: unknown, reason: "is not a parameter of '\(transform)'; known: \(known.sorted())")
        }
    }

    private func missing(_ key: String, _ expected: String) -> BindingError {
        .invalidParameter(transform: transform, parameter: key, reason: "is required (\(expected))")
    }

    func wrongType(_ key: String, _ expected: String, _ found: JSON) -> BindingError {
        .invalidParameter(transform: transform, parameter: key, reason: "must be \(expected), found \(found)")
    }
}
