import OrderedCollections
import DequeModule

extension JSON {
    /// The value at the first `depth` components of `path` (all of them by default).
    package func value(at path: Path, depth: Int? = nil) throws(StoreError) -> JSON {
        var current = self
        for level in 0..<(depth ?? path.components.count) {
            let component = path.components[level]
            switch current {
            case .object(let members):
                guard let child = members[component] else { throw .pathNotFound(path.prefix(level + 1)) }
                current = child
            case .array(let elements):
                guard let index = Path.arrayIndex(component) else { throw .pathNotFound(path.prefix(level + 1)) }
                guard index < elements.count else {
                    throw .indexOutOfRange(path: path.prefix(level), index: index, count: elements.count)
                }
                current = elements[index]
            default:
                throw .typeMismatch(path: path.prefix(level), expected: "object or array", found: current.typeName)
            }
        }
        return current
    }

    /// Runs `body` on the value at the first `depth` components of `path`, in place.
    ///
    /// Each container on the way is taken out of its parent (which is left `.null` meanwhile) so that its
    /// storage stays uniquely referenced and `body` can mutate it without copying.
    mutating func withValue<R>(
        at path: Path, depth: Int, level: Int = 0, _ body: (inout JSON) throws(StoreError) -> R
    ) throws(StoreError) -> R {
        if level == depth { return try body(&self) }
        let component = path.components[level]
        var members = OrderedDictionary<String, JSON>()
        if takeObject(into: &members) {
            defer { self = .object(members) }
            guard let index = members.index(forKey: component) else { throw .pathNotFound(path.prefix(level + 1)) }
            return try members.values[index].withValue(at: path, depth: depth, level: level + 1, body)
        }
        var elements = Deque<JSON>()
        if takeArray(into: &elements) {
            defer { self = .array(elements) }
            guard let index = Path.arrayIndex(component) else { throw .pathNotFound(path.prefix(level + 1)) }
            guard index < elements.count else {
                throw .indexOutOfRange(path: path.prefix(level), index: index, count: elements.count)
            }
            return try elements[index].withValue(at: path, depth: depth, level: level + 1, body)
        }
        throw .typeMismatch(path: path.prefix(level), expected: "object or array", found: typeName)
    }

    /// When this is an object, moves its members into `members` and leaves `.null` behind, so that the
    /// members' storage is uniquely referenced and can be mutated without a copy. Put them back after.
    ///
    /// A separate function rather than `if case .object(var m) = self`: the matched temporary could
    /// otherwise keep a second reference alive during the mutation (it does in debug builds).
    mutating func takeObject(into members: inout OrderedDictionary<String, JSON>) -> Bool {
        guard case .object(let taken) = self else { return false }
        self = .null
        members = taken
        return true
    }

    /// When this is an array, moves its elements into `elements` and leaves `.null` behind; see
    /// ``takeObject(into:)``.
    mutating func takeArray(into elements: inout Deque<JSON>) -> Bool {
        guard case .array(let taken) = self else { return false }
        self = .null
        elements = taken
        return true
    }

    /// This value with `null` members removed from every object inside it (RFC 7386's result for a
    /// patch applied to a non-object).
    func removingNullMembers() -> JSON {
        guard case .object(let members) = self else { return self }
        var result = members
        result.removeAll(where: { $0.value == .null })
        for index in result.values.indices {
            result.values[index] = result.values[index].removingNullMembers()
        }
        return .object(result)
    }
}

extension Path {
    /// The path made of the first `count` components.
    package func prefix(_ count: Int) -> Path {
        count == components.count ? self : Path(Array(components.prefix(count)))
    }
}
