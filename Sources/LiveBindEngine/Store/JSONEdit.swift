import DequeModule

/// Small read and edit helpers on JSON values for bindings (kept apart from the store's own helpers).
enum JSONEdit {
    /// The value at `components` below `json`, or `nil` when something on the way is missing.
    static func value(in json: JSON, at components: some Collection<String>) -> JSON? {
        var current = json
        for component in components {
            switch current {
            case .object(let members):
                guard let next = members[component] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(component), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default: return nil
            }
        }
        return current
    }

    /// Runs `body` on the value at `components`, in place; `false` when the path does not exist.
    static func update(_ json: inout JSON, at components: ArraySlice<String>, _ body: (inout JSON) -> Bool) -> Bool {
        guard let first = components.first else { return body(&json) }
        switch json {
        case .object(var members):
            guard var child = members[first] else { return false }
            json = .null  // release the outer reference so the child can be edited without a copy
            members[first] = .null
            let done = update(&child, at: components.dropFirst(), body)
            members[first] = child
            json = .object(members)
            return done
        case .array(var elements):
            guard let index = Int(first), elements.indices.contains(index) else { return false }
            var child = elements[index]
            json = .null
            elements[index] = .null
            let done = update(&child, at: components.dropFirst(), body)
            elements[index] = child
            json = .array(elements)
            return done
        default:
            return false
        }
    }

    /// Applies `change` to `json`, the value at the change path's first `depth` components.
    /// `false` when the change does not fit the value (the caller then resyncs from the store).
    static func apply(_ change: Change, to json: inout JSON, below depth: Int) -> Bool {
        let relative = change.path.components.dropFirst(depth)
        switch change.kind {
        case .set:
            guard let value = change.value else { return false }
            guard let last = relative.last else { json = value; return true }
            return update(&json, at: relative.dropLast()) { parent in
                switch parent {
                case .object(var members):
                    parent = .null
                    members[last] = value
                    parent = .object(members)
                    return true
                case .array(var elements):
                    guard let index = Int(last), elements.indices.contains(index) else { return false }
                    parent = .null
                    elements[index] = value
                    parent = .array(elements)
                    return true
                default: return false
                }
            }
        case .remove where change.index == nil:
            guard let last = relative.last else { return false }
            return update(&json, at: relative.dropLast()) { parent in
                guard case .object(var members) = parent, members[last] != nil else { return false }
                parent = .null
                members.removeValue(forKey: last)
                parent = .object(members)
                return true
            }
        case .insert, .remove, .replace, .move:
            return update(&json, at: relative) { node in
                guard case .array(var elements) = node, apply(change, to: &elements) else { return false }
                node = .array(elements)
                return true
            }
        }
    }

    /// Applies an array operation (`insert`, `remove` with index, `replace`, `move`) to `elements`.
    static func apply(_ change: Change, to elements: inout Deque<JSON>) -> Bool {
        switch change.kind {
        case .insert:
            guard let index = change.index, let value = change.value, (0...elements.count).contains(index) else { return false }
            elements.insert(value, at: index)
        case .remove:
            guard let index = change.index, elements.indices.contains(index) else { return false }
            elements.remove(at: index)
        case .replace:
            guard let index = change.index, let value = change.value, elements.indices.contains(index) else { return false }
            elements[index] = value
        case .move:
            guard let from = change.from, let to = change.to, elements.indices.contains(from), elements.indices.contains(to) else {
                return false
            }
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
        case .set:
            return false
        }
        return true
    }
}
