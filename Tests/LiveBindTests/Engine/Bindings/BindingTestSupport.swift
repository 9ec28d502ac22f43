import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Parses JSON text in tests (invalid text is a test bug).
func bindingJSON(_ text: String) -> JSON {
    do { return try JSON(parsing: text) } catch { preconditionFailure("bad test JSON \(text): \(error)") }
}

/// A store with the given models (name → JSON text) and a registry on it.
func makeBound(_ models: KeyValuePairs<String, String>) throws -> (Store, BindingRegistry) {
    let store = Store()
    for (name, text) in models { try store.put(name, bindingJSON(text)) }
    return (store, BindingRegistry(store: store))
}

extension Store {
    /// The value at a dotted `model.path`, or `nil` when missing.
    func at(_ dotted: String) -> JSON? {
        guard let endpoint = try? BindingEndpoint(parsing: dotted) else { return nil }
        return try? value(of: endpoint.model, at: endpoint.path)
    }

    /// Sets the value at a dotted `model.path`.
    @discardableResult
    func set(_ value: JSON, at dotted: String) throws -> WriteResult {
        let endpoint = try BindingEndpoint(parsing: dotted)
        return try set(value, at: endpoint.path, in: endpoint.model)
    }
}

/// Collects values from any thread.
final class Collected<Value: Sendable>: Sendable {
    private let values = OrderedMutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// Waits (bounded, about two seconds) on the main actor until `condition` holds, letting other main-actor
/// work (the @Observable bindings' updates) run in between.
@MainActor func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<400 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A model text `{"v0": 0, "v1": 0, …}` with `count` members.
func chainModel(_ count: Int) -> String {
    "{" + (0..<count).map { #""v\#($0)": 0"# }.joined(separator: ", ") + "}"
}
