/// A validation rule on one location of a model, kept by the store and checked inside every write
/// that touches the location, whoever makes it: HTTP, a Swift caller, a binding or a patch.
struct ValidationRule: Sendable {
    let id: UInt64
    /// The location the rule guards.
    let target: Path
    let validation: Validation
}

extension [ValidationRule] {
    /// `value` as it may be written at `path` of `document`: unchanged, or coerced by the rules whose
    /// location it touches. Throws `validationFailed` (naming the rule's location) when a rule rejects it.
    ///
    /// A rule on a location inside `value` checks that part of it; a rule on a location above `path`
    /// checks the location's whole value as the write would leave it.
    func validated(_ value: JSON, at path: Path, in document: JSON) throws(StoreError) -> JSON {
        var result = value
        for rule in self where rule.target.isPrefix(of: path) || path.isPrefix(of: rule.target) {
            let target = rule.target
            if path.isPrefix(of: target) {
                let relative = target.components.dropFirst(path.components.count)
                guard let part = JSONEdit.value(in: result, at: relative) else { continue }
                switch rule.validation.check(part) {
                case .accept: break
                case .reject(let reason): throw .validationFailed(path: target, reason: reason)
                case .coerce(let coerced): _ = JSONEdit.update(&result, at: relative[...]) { $0 = coerced; return true }
                }
            } else {
                guard var whole = try? document.value(at: target) else { continue }
                let depth = target.components.count
                guard JSONEdit.apply(Change(kind: .set, path: path, value: result), to: &whole, below: depth) else { continue }
                switch rule.validation.check(whole) {
                case .accept: break
                case .reject(let reason): throw .validationFailed(path: target, reason: reason)
                case .coerce(let coerced):
                    result = JSONEdit.value(in: coerced, at: path.components.dropFirst(depth)) ?? result
                }
            }
        }
        return result
    }
}

extension Store {
    /// Makes every write that touches `target` in `model` pass `validation` from now on (the model need
    /// not exist yet); the id removes the rule again.
    func addRule(_ validation: Validation, at target: Path, in model: String) -> UInt64 {
        withState { state in
            state.nextRuleID += 1
            state.rules[model, default: []].append(ValidationRule(id: state.nextRuleID, target: target, validation: validation))
            return state.nextRuleID
        }
    }

    /// Removes the rule `id` from `model`; removing it twice does nothing.
    func removeRule(_ id: UInt64, in model: String) {
        withState { state in
            state.rules[model]?.removeAll { $0.id == id }
            if state.rules[model]?.isEmpty == true { state.rules[model] = nil }
        }
    }
}
