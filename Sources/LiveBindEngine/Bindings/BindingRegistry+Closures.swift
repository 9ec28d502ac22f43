extension BindingRegistry {
    /// Calls `handler` with the value at `source` (a dotted `model.path`) decoded as `Value`: now, and on
    /// every change at, above or below it. Values that do not decode are recorded as the binding's last error.
    ///
    /// `Value` can be `Double`, `Int`, `String`, `Bool`, `[T]` of `Decodable`, or any `Decodable`.
    /// Called on the thread delivering the store's changes; stop it with `unbind(id:)`.
    @discardableResult
    public func observe<Value: Decodable & SendableMetatype>(
        _ source: String, as type: Value.Type = Value.self, transform: TransformSpec? = nil,
        _ handler: @escaping @Sendable (Value) -> Void
    ) throws(BindingError) -> Binding {
        let endpoint = try BindingEndpoint(parsing: source)
        let sink = BindingSink(
            deliver: { value in
                guard let value else { return nil }
                do {
                    handler(try JSONCoding.decode(Value.self, from: value))
                    return nil
                } catch {
                    return .decodingFailed(path: endpoint.description, type: "\(Value.self)", reason: "\(error)")
                }
            },
            isAlive: { true })
        return try bind(sink: sink, source: endpoint, target: .closure("\(Value.self)"), transform: transform)
    }

    /// Keeps `object[keyPath: keyPath]` equal to the value at `source` (decoded as `Value`), holding the
    /// object weakly: the binding ends by itself when the object is released.
    ///
    /// > Important: the property is set on the thread that delivers the store's changes. Use this for
    /// > objects that thread may touch (or that synchronise themselves); for an `@Observable` object on the
    /// > main actor, use `bind(_:to:_:mode:transform:)` from the main actor instead.
    @discardableResult
    public func bind<Object: AnyObject & SendableMetatype, Value: Decodable & SendableMetatype>(
        _ source: String, to object: Object, _ keyPath: ReferenceWritableKeyPath<Object, Value>,
        transform: TransformSpec? = nil
    ) throws(BindingError) -> Binding {
        let endpoint = try BindingEndpoint(parsing: source)
        let box = WeakBox(object)
        let path = UncheckedBox(value: keyPath)
        let sink = BindingSink(
            deliver: { value in
                guard let value, let object = box.value else { return nil }
                do {
                    object[keyPath: path.value] = try JSONCoding.decode(Value.self, from: value)
                    return nil
                } catch {
                    return .decodingFailed(path: endpoint.description, type: "\(Value.self)", reason: "\(error)")
                }
            },
            isAlive: { box.value != nil })
        return try bind(sink: sink, source: endpoint, target: .object("\(Object.self).\(Value.self)"), transform: transform)
    }

    /// Registers a closure or object binding and delivers the current value.
    func bind(
        sink: BindingSink, source: BindingEndpoint, target: BindingTarget, mode: BindingMode = .oneWay,
        transform: TransformSpec?
    ) throws(BindingError) -> Binding {
        let spec = BindingSpec(source: source, target: source, mode: mode, transform: transform)
        let prepared = try prepare(spec, target: target, sink: sink)
        let binding = try state.withLock { state throws(BindingError) in try state.insert(prepared, store: store) }
        if !binding.followsPath { startFeed() }
        binding.perform(.resync)
        return binding
    }
}
