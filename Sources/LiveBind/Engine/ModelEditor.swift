import Collections

/// Edits one model inside a `Store.write` call: every edit is applied at once, and the whole write is
/// committed as one unit (one sequence number) or, if any edit throws, rolled back completely.
///
/// > Important: The editor runs while the store is locked. Do not call the store from inside `write`.
public struct ModelEditor {
    var document: JSON
    var changes: [Change]
    var undoLog: [UndoStep]
    var appendedIndex: Int?

    init(document: JSON, changes: [Change], undoLog: [UndoStep]) {
        self.document = document
        self.changes = changes
        self.undoLog = undoLog
    }

    /// The whole document as edited so far.
    public var value: JSON { document }

    /// The value at `path` as edited so far.
    public func value(at path: Path) throws(StoreError) -> JSON {
        try document.value(at: path)
    }

    /// Sets `value` at `path`: creates or replaces an object member, replaces an array element (a
    /// `replace` change), or appends when the last component is `-` or the array's count (an `insert`).
    /// Setting an equal value changes nothing. A missing parent is `pathNotFound`.
    public mutating func set(_ value: JSON, at path: Path) throws(StoreError) {
        guard value.isFinite else { throw .invalidValue("numbers must be finite (JSON has no NaN or infinity)") }
        guard let key = path.last else {
            guard case .object = value else {
                throw .typeMismatch(path: .root, expected: "object", found: value.typeName)
            }
            if document == value { return }
            undoLog.append(.root(document))
            document = value
            changes.append(Change(kind: .set, path: .root, value: value))
            return
        }
        let depth = path.components.count - 1
        let outcome = try document.withValue(at: path, depth: depth) { (parent) throws(StoreError) -> SetOutcome in
            var members = OrderedDictionary<String, JSON>()
            if parent.takeObject(into: &members) {
                defer { parent = .object(members) }
                if let index = members.index(forKey: key) {
                    if members.values[index] == value { return .unchanged }
                    let old = members.values[index]
                    members.values[index] = value
                    return .member(old: old)
                }
                members[key] = value
                return .member(old: nil)
            }
            var elements: [JSON] = []
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
                let old = elements[index]
                elements[index] = value
                return .replaced(index, old: old)
            }
            throw .typeMismatch(path: path.prefix(depth), expected: "object or array", found: parent.typeName)
        }
        switch outcome {
        case .unchanged:
            return
        case .member(let old):
            undoLog.append(.member(path, old: old))
            changes.append(Change(kind: .set, path: path, value: value))
        case .inserted(let index):
            let arrayPath = path.prefix(depth)
            undoLog.append(.inserted(arrayPath, index: index))
            changes.append(Change(kind: .insert, path: arrayPath, value: value, index: index, key: Change.key(of: value)))
            appendedIndex = index
        case .replaced(let index, let old):
            let arrayPath = path.prefix(depth)
            undoLog.append(.replaced(arrayPath, index: index, old: old))
            changes.append(Change(kind: .replace, path: arrayPath, value: value, index: index, key: Change.key(of: value)))
        }
    }

    /// Removes the object member or array element at `path`.
    public mutating func remove(at path: Path) throws(StoreError) {
        guard let key = path.last else {
            throw .invalidValue("the root of a model cannot be removed; drop the model instead")
        }
        let depth = path.components.count - 1
        let outcome = try document.withValue(at: path, depth: depth) { (parent) throws(StoreError) -> RemoveOutcome in
            var members = OrderedDictionary<String, JSON>()
            if parent.takeObject(into: &members) {
                defer { parent = .object(members) }
                guard let index = members.index(forKey: key) else { throw .pathNotFound(path) }
                return .member(old: members.remove(at: index).value, position: index)
            }
            var elements: [JSON] = []
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
            undoLog.append(.removedMember(path, old: old, position: position))
            changes.append(Change(kind: .remove, path: path))
        case .element(let old, let index):
            let arrayPath = path.prefix(depth)
            undoLog.append(.removed(arrayPath, index: index, old: old))
            changes.append(Change(kind: .remove, path: arrayPath, index: index, key: Change.key(of: old)))
        }
    }

    /// Inserts `value` into the array at `array` so that it ends up at `index` (`0...count`).
    public mutating func insert(_ value: JSON, at index: Int, in array: Path) throws(StoreError) {
        guard value.isFinite else { throw .invalidValue("numbers must be finite (JSON has no NaN or infinity)") }
        try withArray(at: array) { (elements) throws(StoreError) in
            guard index >= 0, index <= elements.count else {
                throw .indexOutOfRange(path: array, index: index, count: elements.count)
            }
            elements.insert(value, at: index)
        }
        undoLog.append(.inserted(array, index: index))
        changes.append(Change(kind: .insert, path: array, value: value, index: index, key: Change.key(of: value)))
    }

    /// Appends `value` to the array at `array` and returns its index.
    @discardableResult
    public mutating func append(_ value: JSON, to array: Path) throws(StoreError) -> Int {
        guard value.isFinite else { throw .invalidValue("numbers must be finite (JSON has no NaN or infinity)") }
        let index = try withArray(at: array) { (elements) throws(StoreError) -> Int in
            elements.append(value)
            return elements.count - 1
        }
        undoLog.append(.inserted(array, index: index))
        changes.append(Change(kind: .insert, path: array, value: value, index: index, key: Change.key(of: value)))
        appendedIndex = index
        return index
    }

    /// Replaces the element at `index` of the array at `array`. An equal value changes nothing.
    public mutating func replace(at index: Int, in array: Path, with value: JSON) throws(StoreError) {
        guard value.isFinite else { throw .invalidValue("numbers must be finite (JSON has no NaN or infinity)") }
        let old = try withArray(at: array) { (elements) throws(StoreError) -> JSON? in
            guard index >= 0, index < elements.count else {
                throw .indexOutOfRange(path: array, index: index, count: elements.count)
            }
            if elements[index] == value { return nil }
            let old = elements[index]
            elements[index] = value
            return old
        }
        guard let old else { return }
        undoLog.append(.replaced(array, index: index, old: old))
        changes.append(Change(kind: .replace, path: array, value: value, index: index, key: Change.key(of: value)))
    }

    /// Moves the element at `from` of the array at `array` so that it ends up at `to`.
    public mutating func move(from: Int, to: Int, in array: Path) throws(StoreError) {
        let moved = try withArray(at: array) { (elements) throws(StoreError) -> JSON? in
            for index in [from, to] where index < 0 || index >= elements.count {
                throw .indexOutOfRange(path: array, index: index, count: elements.count)
            }
            if from == to { return nil }
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
            return element
        }
        guard let moved else { return }
        undoLog.append(.moved(array, from: from, to: to))
        changes.append(Change(kind: .move, path: array, from: from, to: to, key: Change.key(of: moved)))
    }

    /// Runs `body` on the array at `path` in place, or throws if there is no array there.
    private mutating func withArray<R>(
        at path: Path, _ body: (inout [JSON]) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        try document.withValue(at: path, depth: path.components.count) { (value) throws(StoreError) -> R in
            var elements: [JSON] = []
            guard value.takeArray(into: &elements) else {
                throw .typeMismatch(path: path, expected: "array", found: value.typeName)
            }
            defer { value = .array(elements) }
            return try body(&elements)
        }
    }
}

extension ModelEditor {
    enum SetOutcome {
        case unchanged
        case member(old: JSON?)
        case inserted(Int)
        case replaced(Int, old: JSON)
    }

    enum RemoveOutcome {
        case member(old: JSON, position: Int)
        case element(old: JSON, index: Int)
    }
}
