import Observation

extension BindingRegistry {
    /// Binds a property of an `@Observable` object to the value at `source`, two-way by default: store
    /// changes are set on the object, and the object's changes are written back to the store.
    ///
    /// The object is held weakly (the binding ends when it is released) and is only touched on the main
    /// actor. Object changes are seen with `withObservationTracking`, registered again after each change;
    /// the new value is read on the main actor's next turn, after the setter has finished. No loops: an
    /// equal value is never set again, and the binding's own store write is not sent back.
    @MainActor
    @discardableResult
    public func bind<Object: Observable & AnyObject & SendableMetatype, Value: Codable & Equatable & Sendable>(
        _ source: String, observable object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
        mode: BindingMode = .twoWay, transform: TransformSpec? = nil
    ) throws(BindingError) -> Binding {
        let endpoint = try BindingEndpoint(parsing: source)
        let property = ObservedProperty(object, keyPath)
        let sink = BindingSink(
            deliver: { value in
                guard let value else { return nil }
                let decoded: Value
                do { decoded = try JSONCoding.decode(Value.self, from: value) } catch {
                    return .decodingFailed(path: endpoint.description, type: "\(Value.self)", reason: "\(error)")
                }
                Task { @MainActor in property.assign(decoded) }
                return nil
            },
            isAlive: { property.isAlive })
        let binding = try bind(
            sink: sink, source: endpoint, target: .object("\(Object.self).\(Value.self)"), mode: mode, transform: transform)
        if mode == .twoWay { property.track(binding) }
        return binding
    }
}

/// One property of one observable object, held weakly and used only on the main actor.
private final class ObservedProperty<Object: Observable & AnyObject, Value: Codable & Equatable & Sendable>: @unchecked Sendable {
    // `@unchecked`: `object` and `keyPath` are only used from main-actor methods; `isAlive` only loads the
    // weak reference, which is atomic.
    private weak var object: Object?
    private let keyPath: ReferenceWritableKeyPath<Object, Value>

    init(_ object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>) {
        self.object = object
        self.keyPath = keyPath
    }

    var isAlive: Bool { object != nil }

    /// Sets the property unless it already has this value (so no change is observed and nothing loops).
    @MainActor func assign(_ value: Value) {
        guard let object, object[keyPath: keyPath] != value else { return }
        object[keyPath: keyPath] = value
    }

    /// Watches the property; on a change, writes the new value back through `binding` and watches again.
    @MainActor func track(_ binding: Binding) {
        guard let object else { return }
        withObservationTracking {
            _ = object[keyPath: keyPath]
        } onChange: { [self] in
            // Called before the new value is stored: read it on the main actor's next turn.
            Task { @MainActor in self.changed(binding) }
        }
    }

    @MainActor private func changed(_ binding: Binding) {
        guard let object, !binding.isRemoved else { return }
        if let value = try? JSONCoding.encode(object[keyPath: keyPath]) {
            binding.perform(.objectValue(value))
        }
        track(binding)
    }
}
