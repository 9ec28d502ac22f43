/// Why a view's written form was refused.
public struct ViewQueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which part: `where`, `order`, `offset` or `limit`.
    public var part: String
    /// What is wrong, and where.
    public var reason: String
    /// The bound the query passed, when that is what is wrong.
    public var exceeded: ViewQuery.Bound?

    /// A query refused for `reason` in `part`, past `exceeded` when that is why.
    public init(part: String, reason: String, exceeded: ViewQuery.Bound? = nil) {
        self.part = part
        self.reason = reason
        self.exceeded = exceeded
    }

    /// `part: reason`.
    public var description: String { "\(part): \(reason)" }
}

extension ViewQuery {
    /// How large a written query may be, so that evaluating it costs at most `maxTerms` comparisons
    /// per element, each of a value no longer than `maxBytes`: a view over n elements costs
    /// O(n × maxTerms) comparisons to arrange (and one element's change O(maxTerms)).
    public struct Limits: Sendable, Hashable {
        /// Most values a filter compares an element with, in all: one per comparison, and one per
        /// value of an `in` list.
        public var maxTerms: Int
        /// Most values in one `in` list.
        public var maxInValues: Int
        /// Most bytes of the written `where` and `order` together.
        public var maxBytes: Int

        /// Bounds with the defaults an operator would choose (the server's `--max-view-terms`,
        /// `--max-view-in`, `--max-view-query-bytes`).
        public init(maxTerms: Int = 256, maxInValues: Int = 128, maxBytes: Int = 8192) {
            self.maxTerms = maxTerms
            self.maxInValues = maxInValues
            self.maxBytes = maxBytes
        }
    }

    /// A bound of ``Limits`` a query passed, and its value.
    public struct Bound: Sendable, Hashable {
        /// Which bound.
        public enum Kind: String, Sendable, Hashable {
            /// ``Limits/maxTerms``.
            case terms
            /// ``Limits/maxInValues``.
            case inValues
            /// ``Limits/maxBytes``.
            case bytes
        }
        /// Which bound.
        public var kind: Kind
        /// Its value.
        public var limit: Int
    }

    /// The view written as `where` (a filter), `order` (sort keys) and a window: docs/Bindings.md,
    /// "Views". Throws ``ViewQueryError`` naming the part and the place that is wrong, with
    /// ``ViewQueryError/exceeded`` set when the query is past one of `limits`.
    ///
    /// ```swift
    /// let open = try ViewQuery(where: "and(status:eq:open,total:ge:100)", order: "-time", limit: 50)
    /// ```
    public init(where filter: String?, order: String? = nil, offset: Int = 0, limit: Int? = nil, limits: Limits = Limits())
        throws(ViewQueryError)
    {
        let bytes = (filter?.utf8.count ?? 0) + (order?.utf8.count ?? 0)
        guard bytes <= limits.maxBytes else {
            throw ViewQueryError(
                part: filter == nil ? "order" : "where",
                reason: "the query is \(bytes) bytes; at most \(limits.maxBytes)",
                exceeded: Bound(kind: .bytes, limit: limits.maxBytes))
        }
        var predicate: ViewPredicate?
        if let filter {
            var parser = ViewQueryParser(filter, part: "where", limits: limits)
            predicate = try parser.parseFilter()
        }
        var keys: [SortKey] = []
        if let order {
            var parser = ViewQueryParser(order, part: "order", limits: limits)
            keys = try parser.parseOrder()
        }
        guard (0...Self.maxOffset).contains(offset) else {
            throw ViewQueryError(part: "offset", reason: "must be 0 to \(Self.maxOffset)")
        }
        if let limit, !(1...Self.maxOffset).contains(limit) {
            throw ViewQueryError(part: "limit", reason: "must be 1 to \(Self.maxOffset)")
        }
        self.init(filter: predicate, order: keys, offset: offset, limit: limit)
    }
}

/// Reads the written form of filters and orders, byte by byte (no recursion past ``ViewQuery/maxNesting``).
struct ViewQueryParser {
    private let text: [UInt8]
    private let part: String
    private var position = 0
    private let limits: ViewQuery.Limits
    private var terms = 0

    init(_ text: String, part: String, limits: ViewQuery.Limits = ViewQuery.Limits()) {
        self.text = Array(text.utf8)
        self.part = part
        self.limits = limits
    }

    /// `expr`: the whole text.
    mutating func parseFilter() throws(ViewQueryError) -> ViewPredicate {
        let predicate = try expression(depth: 0)
        guard position == text.count else { throw error("unexpected '\(rest)'") }
        return predicate
    }

    /// `[-]path(,[-]path)*`.
    mutating func parseOrder() throws(ViewQueryError) -> [ViewQuery.SortKey] {
        var keys: [ViewQuery.SortKey] = []
        repeat {
            if !keys.isEmpty { position += 1 }
            let descending = peek == UInt8(ascii: "-")
            if descending { position += 1 }
            let path = try self.path(until: [UInt8(ascii: ",")])
            keys.append(ViewQuery.SortKey(path, descending: descending))
            guard keys.count <= ViewQuery.maxSortKeys else { throw error("more than \(ViewQuery.maxSortKeys) sort keys") }
        } while peek == UInt8(ascii: ",")
        guard position == text.count else { throw error("unexpected '\(rest)'") }
        return keys
    }

    private mutating func expression(depth: Int) throws(ViewQueryError) -> ViewPredicate {
        guard depth <= ViewQuery.maxNesting else { throw error("and/or/not nest deeper than \(ViewQuery.maxNesting)") }
        for word in ["and", "or", "not"] where starts(with: word + "(") {
            position += word.utf8.count + 1
            var parts: [ViewPredicate] = []
            repeat {
                if !parts.isEmpty { position += 1 }
                parts.append(try expression(depth: depth + 1))
            } while peek == UInt8(ascii: ",")
            try expect(")")
            switch word {
            case "and": return .and(parts)
            case "or": return .or(parts)
            default:
                guard parts.count == 1 else { throw error("not(…) takes one condition") }
                return .not(parts[0])
            }
        }
        return try term()
    }

    private mutating func term() throws(ViewQueryError) -> ViewPredicate {
        try countTerm()
        let path = try self.path(until: [UInt8(ascii: ":")])
        try expect(":")
        let start = position
        while let byte = peek, byte != UInt8(ascii: ":") { position += 1 }
        let name = String(decoding: text[start..<position], as: UTF8.self)
        guard let op = ViewPredicate.Operator(rawValue: name) else {
            position = start
            throw error("'\(name)' is no operator (\(ViewPredicate.Operator.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        try expect(":")
        var values: [JSON] = []
        if op == .in {
            try expect("(")
            repeat {
                if !values.isEmpty {
                    position += 1
                    try countTerm()
                }
                guard values.count < limits.maxInValues else {
                    throw error("an in list of more than \(limits.maxInValues) values", .inValues, limits.maxInValues)
                }
                values.append(try value())
            } while peek == UInt8(ascii: ",")
            try expect(")")
        } else {
            values.append(try value())
        }
        if [.contains, .prefix, .match].contains(op), case .string(let wanted)? = values.first,
            wanted.unicodeScalars.count > ViewQuery.maxSearchLength
        {
            throw error("a \(op.rawValue) value is longer than \(ViewQuery.maxSearchLength) characters")
        }
        return .compare(path, op, values)
    }

    /// A key path: names of `A-Z a-z 0-9 _ - $ @` joined by dots; a dot alone is the element itself.
    private mutating func path(until stops: Set<UInt8>) throws(ViewQueryError) -> ElementPath {
        if peek == UInt8(ascii: "."), position + 1 == text.count || stops.contains(text[position + 1]) {
            position += 1
            return ElementPath([])
        }
        guard let first = peek, !stops.contains(first) else { throw error("a key path is missing (a dot alone is the element itself)") }
        var names: [String] = []
        var start = position
        while let byte = peek, !stops.contains(byte) {
            if byte == UInt8(ascii: ".") {
                guard position > start else { throw error("an empty name in a key path") }
                names.append(String(decoding: text[start..<position], as: UTF8.self))
                start = position + 1
            } else if !Self.isNameByte(byte) {
                throw error("'\(Character(Unicode.Scalar(byte)))' cannot be in a key path (names are A-Z a-z 0-9 _ - $ @, joined by dots)")
            }
            position += 1
        }
        if position > start {
            names.append(String(decoding: text[start..<position], as: UTF8.self))
        } else if !names.isEmpty {
            throw error("a key path ends with a dot")
        }
        return ElementPath(names)
    }

    /// A JSON literal (number, `true`, `false`, `null`, a quoted string) or a bare word, taken as a string.
    private mutating func value() throws(ViewQueryError) -> JSON {
        let start = position
        if peek == UInt8(ascii: "\"") {
            position += 1
            while let byte = peek, byte != UInt8(ascii: "\"") {
                position = min(text.count, position + (byte == UInt8(ascii: "\\") ? 2 : 1))
            }
            try expect("\"")
            guard let value = try? JSON(parsing: Array(text[start..<position])) else {
                position = start
                throw error("a quoted value is not a JSON string")
            }
            return value
        }
        while let byte = peek, !Self.valueStops.contains(byte) { position += 1 }
        guard position > start else { throw error("a value is missing") }
        let word = Array(text[start..<position])
        if let value = try? JSON(parsing: word), value.typeName != "array", value.typeName != "object" { return value }
        return .string(String(decoding: word, as: UTF8.self))
    }

    private static let valueStops: Set<UInt8> = Set(",():\"; ".utf8)

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "$"), UInt8(ascii: "@"):
            true
        default: false
        }
    }

    private var peek: UInt8? { position < text.count ? text[position] : nil }

    private var rest: String { String(decoding: text[min(position, text.count)...], as: UTF8.self) }

    private func starts(with word: String) -> Bool {
        position <= text.count && text[position...].starts(with: word.utf8)
    }

    private mutating func expect(_ symbol: String) throws(ViewQueryError) {
        guard starts(with: symbol) else { throw error(peek == nil ? "'\(symbol)' expected at the end" : "'\(symbol)' expected") }
        position += symbol.utf8.count
    }

    /// Counts one more value to compare with, against ``ViewQuery/Limits/maxTerms``.
    private mutating func countTerm() throws(ViewQueryError) {
        terms += 1
        guard terms <= limits.maxTerms else {
            throw error("more than \(limits.maxTerms) values to compare with (one per condition and per in value)", .terms, limits.maxTerms)
        }
    }

    private func error(_ reason: String, _ kind: ViewQuery.Bound.Kind? = nil, _ limit: Int = 0) -> ViewQueryError {
        ViewQueryError(
            part: part, reason: "\(reason) at character \(position + 1)",
            exceeded: kind.map { ViewQuery.Bound(kind: $0, limit: limit) })
    }
}
