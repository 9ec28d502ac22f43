/// A validation rule on one location of a model, kept by the store and checked inside every write
/// that touches the location, whoever makes it: HTTP, a Swift caller, a binding or a patch.
struct ValidationRule: Sendable {
    let id: UInt64
    /// The location the rule guards.
    let target: Path
    let validation: Validation
    /// Whether the rule guards each element of the array at `target` (an `each` binding's rule)
    /// rather than the value at `target`.
    var elements = false
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
            var target = rule.target
            if rule.elements {
                guard path.components.count > target.components.count else {
                    result = try Self.validatedElements(result, at: path, by: rule)
                    continue
                }
                // A write inside the array: the rule guards the element it lands in.
                target = target.appending(path.components[target.components.count])
            }
            if path.isPrefix(of: target) {
                let relative = target.components.dropFirst(path.components.count)
                guard let part = JSONEdit.value(in: result, at: relative) else { continue }
                switch rule.validation.check(part) {
                case .accept: break
                case .reject(let reason): throw .validationFailed(path: target, reason: reason)
                case .coerce(let coerced):
                    _ = JSONEdit.update(&result, at: relative[...]) {
                        $0 = coerced; return true
                    }
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

    /// `value`, written at `path` at or above an elements rule's array, with each element of that array
    /// checked (and maybe coerced).
    private static func validatedElements(_ value: JSON, at path: Path, by rule: ValidationRule) throws(StoreError) -> JSON {
        let relative = rule.target.components.dropFirst(path.components.count)
        guard case .array(let elements)? = JSONEdit.value(in: value, at: relative) else { return value }
        var checked = elements
        for index in elements.indices {
            switch rule.validation.check(elements[index]) {
            case .accept: break
            case .reject(let reason): throw .validationFailed(path: rule.target.appending(String(index)), reason: reason)
            case .coerce(let coerced): checked[index] = coerced
            }
        }
        var result = value
        _ = JSONEdit.update(&result, at: relative[...]) {
            $0 = .array(checked); return true
        }
        return result
    }
}

extension Store {
    /// Makes every write that touches `target` in `model` pass `validation` from now on (the model need
    /// not exist yet); the id removes the rule again.
    /// With `elements`, the rule guards each element of the array at `target` instead.
    func addRule(_ validation: Validation, at target: Path, in model: String, elements: Bool = false) -> UInt64 {
        withState { state in
            state.nextRuleID += 1
            state.rules[model, default: []].append(
                ValidationRule(id: state.nextRuleID, target: target, validation: validation, elements: elements))
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
