import Collections

/// The store's fast path for the most common write: replacing the value of an object member that
/// already exists (`sensor.value = 21.5`). It keeps no undo step and builds no intermediate records,
/// which the general `applySet` does for `Store.write`.
extension JSON {
    /// What `replaceMember` did.
    enum MemberReplacement {
        /// The member held an equal value: nothing changed.
        case unchanged
        /// The member's value was replaced; this was the old one.
        case replaced(old: JSON)
        /// The path does not name an existing object member: nothing was touched, and the general path
        /// must handle (or reject) the write.
        case notApplicable
    }

    /// Replaces the value of the existing object member at `path` in place. The caller has measured
    /// `value` (it is finite).
    mutating func replaceMember(_ value: JSON, at path: Path) -> MemberReplacement {
        guard !path.components.isEmpty else { return .notApplicable }
        return replaceMember(value, at: path.components, level: 0)
    }

    private mutating func replaceMember(_ value: JSON, at components: [String], level: Int) -> MemberReplacement {
        let isLast = level == components.count - 1
        var members = OrderedDictionary<String, JSON>()
        if takeObject(into: &members) {
            defer { self = .object(members) }
            guard let index = members.index(forKey: components[level]) else { return .notApplicable }
            guard isLast else { return members.values[index].replaceMember(value, at: components, level: level + 1) }
            if members.values[index] == value { return .unchanged }
            var old = value
            swap(&old, &members.values[index])
            return .replaced(old: old)
        }
        // Array elements on the way; the element itself is a `replace` change, left to the general path.
        guard !isLast, case .array = self else { return .notApplicable }
        var elements = Deque<JSON>()
        _ = takeArray(into: &elements)
        defer { self = .array(elements) }
        guard let index = Path.arrayIndex(components[level]), index < elements.count else { return .notApplicable }
        return elements[index].replaceMember(value, at: components, level: level + 1)
    }
}
