import OrderedCollections

/// A consistent snapshot of one binding's inspectable state; `json` is what the HTTP API returns.
public struct BindingInfo: Sendable, Equatable {
    /// The binding's id.
    public var id: String
    /// `model.path` of the source.
    public var source: String
    /// `model.path` of the target, or `closure(…)`/`object(…)`.
    public var target: String
    /// One-way or two-way.
    public var mode: BindingMode
    /// The transform as specified, or `nil`.
    public var transform: TransformSpec?
    /// Whether it propagates.
    public var enabled: Bool
    /// How many times it propagated a value.
    public var fireCount: Int
    /// The last failure's message, or `nil`.
    public var lastError: String?

    /// `{"id","source","target","mode","transform","enabled","fireCount","lastError"}`.
    public var json: JSON {
        let members: OrderedDictionary<String, JSON> = [
            "id": .string(id),
            "source": .string(source),
            "target": .string(target),
            "mode": .string(mode.rawValue),
            "transform": transform?.json ?? .null,
            "enabled": .bool(enabled),
            "fireCount": .int(fireCount),
            "lastError": lastError.map(JSON.string) ?? .null
        ]
        return .object(members)
    }
}

extension Binding {
    /// The binding's state now, taken under its lock.
    public var info: BindingInfo {
        state.withLock { state in
            BindingInfo(
                id: id, source: source.description, target: target.description, mode: mode,
                transform: transformSpec, enabled: state.enabled, fireCount: state.fireCount,
                lastError: state.lastError?.description)
        }
    }

    /// `info.json`: the description the HTTP API returns.
    public var json: JSON { info.json }
}
