import OrderedCollections
import DequeModule

/// A JSON value: the content of every model, and of every change a model emits.
///
/// Objects keep their keys in insertion order. Equality is JSON equality: object key order does not
/// matter, an integer equals a double of the same exact value (`1 == 1.0`), and strings (values and
/// member names) are equal only when their Unicode scalars are (`"é"` and `"e\u{301}"` differ).
public enum JSON: Sendable, Hashable, CustomStringConvertible {
    /// The JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits an `Int`.
    case int(Int)
    /// Any other number. Only finite values can be stored in a model.
    case double(Double)
    /// A string.
    case string(String)
    /// An array. A `Deque` (from swift-collections' `DequeModule`), so that inserting or removing at
    /// either end costs the same whatever the length. It is indexed from 0 like an `Array`; write
    /// `.array([1, 2])` with a literal, or `.array(Deque(elements))` from a Swift array.
    case array(Deque<JSON>)
    /// An object whose keys keep their insertion order.
    case object(OrderedDictionary<String, JSON>)

    /// The compact JSON text of this value.
    public var description: String {
        String(decoding: encoded(), as: UTF8.self)
    }

    /// The JSON type name used in error messages: `null`, `boolean`, `number`, `string`, `array`, `object`.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The members when this is an object, else `nil`.
    public var objectValue: OrderedDictionary<String, JSON>? {
        if case .object(let members) = self { members } else { nil }
    }

    /// The elements when this is an array, else `nil`. Shares the storage: no copy is made.
    public var arrayValue: Deque<JSON>? {
        if case .array(let elements) = self { elements } else { nil }
    }

    /// The number as a `Double` when this is `.int` or `.double`, else `nil`.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The string when this is `.string`, else `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The Boolean when this is `.bool`, else `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The member `key` when this is an object that has it, else `nil`.
    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { members[key] } else { nil }
    }
}

extension JSON {
    /// JSON equality: object members compare regardless of order, numbers by exact value, and strings
    /// by their Unicode scalars.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Self.exactInt(b) == a
        case (.string(let a), .string(let b)): return Self.sameScalars(a, b)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                // The dictionary finds a key by Swift's String equality: check that it is this very key.
                guard let index = b.index(forKey: key), Self.sameScalars(b.keys[index], key), b.values[index] == value
                else { return false }
            }
            return true
        default: return false
        }
    }

    /// Whether two strings are the same Unicode scalars, as RFC 8259 (section 8.3), RFC 6901 and RFC 6902
    /// compare strings. Swift's `==` also equates canonically equivalent strings (`"é"` as one scalar
    /// and as `e` with a combining accent), which would make a write of one over the other change
    /// nothing, and a JSON Patch `test` of one pass against the other. Hashing stays consistent:
    /// strings equal here are equal for Swift too, so they hash alike.
    @inline(__always)
    static func sameScalars(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    /// Hashes consistently with `==`: member order is ignored, integral doubles hash as integers.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .bool(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .int(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .double(let value):
            if let integer = Self.exactInt(value) {
                hasher.combine(2 as UInt8); hasher.combine(integer)
            } else {
                hasher.combine(3 as UInt8); hasher.combine(value)
            }
        case .string(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        case .array(let elements): hasher.combine(5 as UInt8); hasher.combine(elements)
        case .object(let members):
            // Order-independent: sum the members' own hashes.
            var sum = 0
            for (key, value) in members {
                var memberHasher = Hasher()
                memberHasher.combine(key)
                memberHasher.combine(value)
                sum = sum &+ memberHasher.finalize()
            }
            hasher.combine(6 as UInt8); hasher.combine(members.count); hasher.combine(sum)
        }
    }

    /// The `Int` equal to `value` when there is one.
    private static func exactInt(_ value: Double) -> Int? {
        Int(exactly: value)
    }
}
