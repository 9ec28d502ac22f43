import OrderedCollections
import DequeModule

/// Lets JSON be written as Swift literals: `let v: JSON = ["name": "probe", "readings": [1, 2.5, nil]]`.
extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean literal is `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer literal is `.int`.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point literal is `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A string literal is `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array literal is `.array`.
    public init(arrayLiteral elements: JSON...) { self = .array(Deque(elements)) }
    /// A dictionary literal is `.object`, keys in the order written; a repeated key keeps the last value.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        var members = OrderedDictionary<String, JSON>(minimumCapacity: elements.count)
        for (key, value) in elements { members[key] = value }
        self = .object(members)
    }
}
