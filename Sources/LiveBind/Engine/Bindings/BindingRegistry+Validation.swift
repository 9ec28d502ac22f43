extension BindingRegistry {
    /// Checks a proposed write against the validation rules of the bindings whose target it touches, and
    /// returns the value to write (coerced where a rule coerces). Call it before committing a write that
    /// comes from outside the bindings (the server does, for HTTP writes); `write(_:at:in:)` does both.
    ///
    /// A write at or above a bound target is checked for the part that lands on the target; a write inside
    /// a bound target is checked as the target's whole value after the write.
    /// Throws `StoreError.validationFailed(path:reason:)` (with the target's path) when a rule rejects.
    public func validate(model: String, path: Path, value: JSON) throws(StoreError) -> JSON {
        let rules = state.withLock { state in
            state.bindings.values.compactMap { binding -> (Path, Validation)? in
                guard let rule = binding.validation, let target = binding.target.endpoint, target.model == model,
                      target.isTouched(by: path) else { return nil }
                return (target.path, rule)
            }
        }
        var result = value
        for (target, rule) in rules {
            if path.isPrefix(of: target) {
                let relative = target.components.dropFirst(path.components.count)
                guard let part = JSONEdit.value(in: result, at: relative) else { continue }
                switch rule.check(part) {
                case .accept: break
                case .reject(let reason): throw .validationFailed(path: target, reason: reason)
                case .coerce(let coerced): _ = JSONEdit.update(&result, at: relative[...]) { $0 = coerced; return true }
                }
            } else {
                guard var whole = try? store.value(of: model, at: target) else { continue }
                let depth = target.components.count
                guard JSONEdit.apply(Change(kind: .set, path: path, value: result), to: &whole, below: depth) else { continue }
                switch rule.check(whole) {
                case .accept: break
                case .reject(let reason): throw .validationFailed(path: target, reason: reason)
                case .coerce(let coerced):
                    result = JSONEdit.value(in: coerced, at: path.components.dropFirst(depth)) ?? result
                }
            }
        }
        return result
    }

    /// Validates (see `validate(model:path:value:)`) and then sets `value` at `path` in `model`.
    @discardableResult
    public func write(_ value: JSON, at path: Path, in model: String) throws(StoreError) -> WriteResult {
        try store.set(try validate(model: model, path: path, value: value), at: path, in: model)
    }
}
