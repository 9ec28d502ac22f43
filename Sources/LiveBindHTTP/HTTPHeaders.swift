/// An ordered list of HTTP header fields with case-insensitive lookup.
package struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in the order they were added.
    package private(set) var fields: [(name: String, value: String)] = []

    /// An empty header list.
    package init() {}

    /// Headers from fields in order (the libmicrohttpd bridge collects them straight into one array).
    package init(fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// An empty header list with room for `capacity` fields.
    init(capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Headers from literal pairs, in order.
    package init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Appends a field, keeping any earlier field with the same name.
    package mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field called `name` with one field.
    package mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.sameName($0.name, name) }
        fields.append((name, value))
    }

    /// Removes every field called `name`.
    package mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// The first value of the field called `name` (case-insensitive), if any.
    package subscript(_ name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of the fields called `name` (case-insensitive), in order.
    package func values(of name: String) -> [String] {
        fields.compactMap { Self.sameName($0.name, name) ? $0.value : nil }
    }

    /// Whether two field names are equal ignoring ASCII case (field names are ASCII tokens), without
    /// making lowercased copies: every request looks up several fields.
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        var a = a, b = b
        return a.withUTF8 { a in
            b.withUTF8 { b in
                guard a.count == b.count else { return false }
                for index in a.indices where a[index] != b[index] {
                    guard a[index] | 0x20 == b[index] | 0x20, (0x61...0x7A).contains(a[index] | 0x20) else { return false }
                }
                return true
            }
        }
    }

    /// Iterates the fields in order.
    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }
}
