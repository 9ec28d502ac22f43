import OrderedCollections
import DequeModule

/// The single edits every write is made of. Each one either throws before changing anything, or applies
/// itself in place and returns its change with the step that undoes it (`nil` when nothing changed).
/// Values are measured (finite, within the depth limit) by the caller before they reach these.
extension JSON {
    typealias Edit = (change: Change, undo: UndoStep)

    /// See ``ModelEditor/set(_:at:)``.
    mutating func applySet(_ value: JSON, at path: Path) throws(StoreError) -> Edit? {
        guard let key = path.last else {
            guard case .object = value else {
                throw .typeMismatch(path: .root, expected: "object", found: value.typeName)
            }
            if self == value { return nil }
            let old = self
            self = value
            return (Change(kind: .set, path: .root, value: value), .root(old))
        }
        let depth = path.components.count - 1
        let outcome = try withValue(at: path, depth: depth) { (parent) throws(StoreError) -> SetOutcome in
            var members = OrderedDictionary<String, JSON>()
            if parent.takeObject(into: &members) {
                defer { parent = .object(members) }
                if let index = members.index(forKey: key) {
                    if members.values[index] == value { return .unchanged }
                    return .member(old: swapValue(&members.values[index], value))
                }
                members[key] = value
                return .member(old: nil)
            }
            var elements = Deque<JSON>()
            if parent.takeArray(into: &elements) {
                defer { parent = .array(elements) }
                guard let index = key == "-" ? elements.count : Path.arrayIndex(key) else { throw .pathNotFound(path) }
                if index == elements.count {
                    elements.append(value)
                    return .inserted(index)
                }
                guard index < elements.count else {
                    throw .indexOutOfRange(path: path.prefix(depth), index: index, count: elements.count)
                }
                if elements[index] == value { return .unchanged }
                return .replaced(index, old: swapValue(&elements[index], value))
            }
            throw .typeMismatch(path: path.prefix(depth), expected: "object or array", found: parent.typeName)
        }
        switch outcome {
        case .unchanged:
            return nil
        case .member(let old):
            return (Change(kind: .set, path: path, value: value), .member(path, old: old))
        case .inserted(let index):  // always at the end: a set inserts only there
            let array = path.prefix(depth)
            var change = Change(kind: .insert, path: array, value: value, index: index, key: Change.key(of: value))
            change.atEnd = true
            return (change, .inserted(array, index: index))
        case .replaced(let index, let old):
            let array = path.prefix(depth)
            return (
                Change(kind: .replace, path: array, value: value, index: index, key: Change.key(of: value)),
                .replaced(array, index: index, old: old)
            )
        }
    }

    /// See ``ModelEditor/remove(at:)``.
    mutating func applyRemove(at path: Path) throws(StoreError) -> Edit {
        guard let key = path.last else {
            throw .invalidValue("the root of a model cannot be removed; drop the model instead")
        }
        let depth = path.components.count - 1
        let outcome = try withValue(at: path, depth: depth) { (parent) throws(StoreError) -> RemoveOutcome in
            var members = OrderedDictionary<String, JSON>()
            if parent.takeObject(into: &members) {
                defer { parent = .object(members) }
                guard let index = members.index(forKey: key) else { throw .pathNotFound(path) }
                return .member(old: members.remove(at: index).value, position: index)
            }
            var elements = Deque<JSON>()
            if parent.takeArray(into: &elements) {
                defer { parent = .array(elements) }
                guard let index = Path.arrayIndex(key) else { throw .pathNotFound(path) }
                guard index < elements.count else {
                    throw .indexOutOfRange(path: path.prefix(depth), index: index, count: elements.count)
                }
                return .element(old: elements.remove(at: index), index: index)
            }
            throw .typeMismatch(path: path.prefix(depth), expected: "object or array", found: parent.typeName)
        }
        switch outcome {
        case .member(let old, let position):
            return (Change(kind: .remove, path: path), .removedMember(path, old: old, position: position))
        case .element(let old, let index):
            let array = path.prefix(depth)
            return (
                Change(kind: .remove, path: array, index: index, key: Change.key(of: old)),
                .removed(array, index: index, old: old)
            )
        }
    }

    /// See ``ModelEditor/insert(_:at:in:)``; `index` `nil` appends.
    mutating func applyInsert(_ value: JSON, at index: Int?, in array: Path) throws(StoreError) -> Edit {
        let (landed, atEnd) = try withArray(at: array) { (elements) throws(StoreError) -> (Int, Bool) in
            guard let index else {
                elements.append(value)
                return (elements.count - 1, true)
            }
            guard index >= 0, index <= elements.count else {
                throw .indexOutOfRange(path: array, index: index, count: elements.count)
            }
            elements.insert(value, at: index)
            return (index, index == elements.count - 1)
        }
        var change = Change(kind: .insert, path: array, value: value, index: landed, key: Change.key(of: value))
        change.atEnd = atEnd
        return (change, .inserted(array, index: landed))
    }

    /// See ``ModelEditor/replace(at:in:with:)``.
    mutating func applyReplace(at index: Int, in array: Path, with value: JSON) throws(StoreError) -> Edit? {
        let old = try withArray(at: array) { (elements) throws(StoreError) -> JSON? in
            guard index >= 0, index < elements.count else {
                throw .indexOutOfRange(path: array, index: index, count: elements.count)
            }
            if elements[index] == value { return nil }
            return swapValue(&elements[index], value)
        }
        guard let old else { return nil }
        return (
            Change(kind: .replace, path: array, value: value, index: index, key: Change.key(of: value)),
            .replaced(array, index: index, old: old)
        )
    }

    /// See ``ModelEditor/move(from:to:in:)``.
    mutating func applyMove(from: Int, to: Int, in array: Path) throws(StoreError) -> Edit? {
        let moved = try withArray(at: array) { (elements) throws(StoreError) -> JSON? in
            let range = 0..<elements.count
            guard range.contains(from) else { throw .indexOutOfRange(path: array, index: from, count: elements.count) }
            guard range.contains(to) else { throw .indexOutOfRange(path: array, index: to, count: elements.count) }
            if from == to { return nil }
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
            return element
        }
        guard let moved else { return nil }
        return (
            Change(kind: .move, path: array, from: from, to: to, key: Change.key(of: moved)),
            .moved(array, from: from, to: to)
        )
    }

    /// Runs `body` on the array at `path` in place, or throws if there is no array there.
    mutating func withArray<R>(at path: Path, _ body: (inout Deque<JSON>) throws(StoreError) -> R) throws(StoreError) -> R {
        try withValue(at: path, depth: path.components.count) { (value) throws(StoreError) -> R in
            var elements = Deque<JSON>()
            guard value.takeArray(into: &elements) else {
                throw .typeMismatch(path: path, expected: "array", found: value.typeName)
            }
            defer { value = .array(elements) }
            return try body(&elements)
        }
    }
}

/// Stores `new` in `slot` and returns what was there.
private func swapValue(_ slot: inout JSON, _ new: JSON) -> JSON {
    let old = slot
    slot = new
    return old
}

private enum SetOutcome {
    case unchanged
    case member(old: JSON?)
    case inserted(Int)
    case replaced(Int, old: JSON)
}

private enum RemoveOutcome {
    case member(old: JSON, position: Int)
    case element(old: JSON, index: Int)
}
