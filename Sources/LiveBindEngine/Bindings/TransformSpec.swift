import OrderedCollections

/// A transform by name with its parameters, as written in a binding entry:
/// `"count"` or `{"name": "format", "pattern": "%.1f °C"}`.
public struct TransformSpec: Sendable, Equatable {
    /// The registered transform's name.
    public var name: String
    /// Every member of the entry except `name`.
    public var parameters: OrderedDictionary<String, JSON>

    /// A spec from its parts.
    public init(_ name: String, _ parameters: OrderedDictionary<String, JSON> = [:]) {
        self.name = name
        self.parameters = parameters
    }

    /// Reads a string (the name) or an object with a string `name` member.
    public init(json: JSON) throws(BindingError) {
        switch json {
        case .string(let name) where !name.isEmpty:
            self.init(name)
        case .object(var members):
            guard case .string(let name)? = members.removeValue(forKey: "name"), !name.isEmpty else {
                throw .invalidSpec(position: "name", reason: "a transform object needs a non-empty string \"name\"")
            }
            self.init(name, members)
        default:
            throw .invalidSpec(position: "", reason: "expected a transform name or {\"name\": ..., parameters}, found \(json)")
        }
    }

    /// The name alone when there are no parameters, else an object with `name` first.
    public var json: JSON {
        if parameters.isEmpty { return .string(name) }
        var members: OrderedDictionary<String, JSON> = ["name": .string(name)]
        for (key, value) in parameters { members[key] = value }
        return .object(members)
    }
}
