import OrderedCollections
import DequeModule

/// The store's fast path for the most common write: replacing the value of an object member that
/// already exists (`sensor.value = 21.5`). It keeps no undo step and builds no intermediate records,
/// which the general `applySet` does for `Store.write`.
extension JSON {
    /// What `replaceMember` did.
    enum MemberReplacement {
        /// The member held an equal value: nothing changed.
        case unchanged
        /// The member's value was replaced; the model's counted size changed by `sizeDelta`.
        case replaced(sizeDelta: Int)
        /// The new value would grow the model by `sizeDelta`, more than the room it has: nothing changed.
        case tooLarge(sizeDelta: Int)
        /// The path does not name an existing object member: nothing was touched, and the general path
        /// must handle (or reject) the write.
        case notApplicable
    }

    /// Replaces the value of the existing object member at `path` in place, unless that would grow
    /// the model by more than `room` bytes. `size` is the counted size of `value` (so it is finite).
    mutating func replaceMember(_ value: JSON, size: Int, room: Int, at path: Path) -> MemberReplacement {
        guard !path.components.isEmpty else { return .notApplicable }
        return replaceMember(value, size: size, room: room, at: path.components, level: 0)
    }

    private mutating func replaceMember(_ value: JSON, size: Int, room: Int, at components: [String], level: Int)
        -> MemberReplacement
    {
        let isLast = level == components.count - 1
        var members = OrderedDictionary<String, JSON>()
        if takeObject(into: &members) {
            defer { self = .object(members) }
            guard let index = members.index(forKey: components[level]) else { return .notApplicable }
            guard isLast else {
                return members.values[index].replaceMember(value, size: size, room: room, at: components, level: level + 1)
            }
            if members.values[index] == value { return .unchanged }
            let sizeDelta = size - members.values[index].countedSize
            if sizeDelta > room { return .tooLarge(sizeDelta: sizeDelta) }
            members.values[index] = value
            return .replaced(sizeDelta: sizeDelta)
        }
        // Array elements on the way; the element itself is a `replace` change, left to the general path.
        guard !isLast, case .array = self else { return .notApplicable }
        var elements = Deque<JSON>()
        _ = takeArray(into: &elements)
        defer { self = .array(elements) }
        guard let index = Path.arrayIndex(components[level]), index < elements.count else { return .notApplicable }
        return elements[index].replaceMember(value, size: size, room: room, at: components, level: level + 1)
    }
}
