/// Where a binding delivers values: a key path in a model, a Swift closure, or a Swift object's property.
public enum BindingTarget: Sendable, Hashable, CustomStringConvertible {
    /// A key path in a model of the same store.
    case endpoint(BindingEndpoint)
    /// A closure; the text says what it receives, e.g. `closure(Double)`.
    case closure(String)
    /// A property of a Swift object, e.g. `object(Thermostat.target)`.
    case object(String)

    /// The endpoint for `.endpoint`, else `nil`.
    public var endpoint: BindingEndpoint? {
        if case .endpoint(let endpoint) = self { endpoint } else { nil }
    }

    /// `model.path`, `closure(Type)` or `object(Type.property)`.
    public var description: String {
        switch self {
        case .endpoint(let endpoint): endpoint.description
        case .closure(let text): "closure(\(text))"
        case .object(let text): "object(\(text))"
        }
    }
}

/// Receives the values of a closure or object binding, and says whether its receiver still exists.
package struct BindingSink: Sendable {
    /// Called with the source value (`nil` when the source is missing); returns an error to record.
    var deliver: @Sendable (JSON?) -> BindingError?
    /// `false` once a weakly held receiver is gone: the binding then ends by itself.
    var isAlive: @Sendable () -> Bool
}

/// A weak reference that can cross threads; the object itself is only touched as the binding documents.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    /// The object while it exists. `weak` loads and stores are atomic in Swift.
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}

/// Carries a value that is not `Sendable` to where the binding's thread contract allows using it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
}
