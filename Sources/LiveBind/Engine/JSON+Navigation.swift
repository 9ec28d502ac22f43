extension JSON {
    /// The value at the first `depth` components of `path` (all of them by default).
    func value(at path: Path, depth: Int? = nil) throws(StoreError) -> JSON {
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
        switch self {
        case .object(var members):
            guard let index = members.index(forKey: component) else { throw .pathNotFound(path.prefix(level + 1)) }
            self = .null
            defer { self = .object(members) }
            return try members.values[index].withValue(at: path, depth: depth, level: level + 1, body)
        case .array(var elements):
            guard let index = Path.arrayIndex(component) else { throw .pathNotFound(path.prefix(level + 1)) }
            guard index < elements.count else {
                throw .indexOutOfRange(path: path.prefix(level), index: index, count: elements.count)
            }
            self = .null
            defer { self = .array(elements) }
            return try elements[index].withValue(at: path, depth: depth, level: level + 1, body)
        default:
            throw .typeMismatch(path: path.prefix(level), expected: "object or array", found: typeName)
        }
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
    func prefix(_ count: Int) -> Path {
        count == components.count ? self : Path(Array(components.prefix(count)))
    }
}
