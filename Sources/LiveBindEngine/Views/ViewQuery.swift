/// What an arranged view shows of an array: the elements a filter keeps, in the order of its sort
/// keys, from `offset`, at most `limit` of them: Cocoa's `NSArrayController` (`filterPredicate`,
/// `sortDescriptors`) over a LiveBind array.
///
/// Its written form (``init(where:order:offset:limit:)``, the `sub=…;where=…;order=…` of a stream, a
/// view in a definition file) is in docs/Bindings.md, "Views":
/// `where=and(status:eq:open,total:ge:100)`, `order=-time,id`.
public struct ViewQuery: Sendable, Hashable {
    /// Which elements the view keeps; nil keeps every one.
    public var filter: ViewPredicate?
    /// The order: the first key decides, ties go to the next; elements equal in every key keep their
    /// order in the array (a stable sort). No keys: the array's order.
    public var order: [SortKey]
    /// How many arranged elements are skipped.
    public var offset: Int
    /// Most elements shown (nil: all).
    public var limit: Int?

    /// One sort key: a key path in the element, ascending or descending.
    public struct SortKey: Sendable, Hashable {
        /// Where the key is in an element.
        public var path: ElementPath
        /// Largest first.
        public var descending: Bool

        /// A key at `path`, ascending unless `descending`.
        public init(_ path: ElementPath, descending: Bool = false) {
            self.path = path
            self.descending = descending
        }
    }

    /// A view with every part given.
    public init(filter: ViewPredicate? = nil, order: [SortKey] = [], offset: Int = 0, limit: Int? = nil) {
        self.filter = filter
        self.order = order
        self.offset = offset
        self.limit = limit
    }

    /// Most levels of `and`/`or`/`not` a filter nests.
    public static let maxNesting = 16
    /// Most sort keys.
    public static let maxSortKeys = 8
    /// Largest offset and limit (no array holds more elements than this).
    public static let maxOffset = 1 << 40
    /// Longest string a `contains`, `prefix` or `match` looks for, in Unicode scalars.
    public static let maxSearchLength = 256

    /// Whether `element` is in the view.
    func keeps(_ element: JSON) -> Bool {
        filter?.holds(for: element) ?? true
    }

    /// The element's sort keys, in ``order``'s order.
    func sortValues(of element: JSON) -> [JSON?] {
        order.map { $0.path.value(in: element) }
    }

    /// The shown rows of `elements` by filtering and stably sorting all of them: what an
    /// ``ArrangedArray`` must hold, computed the slow way (tests and fuzzing compare the two).
    package func arrangedByFullSort(_ elements: [JSON]) -> (rows: [JSON], matching: Int) {
        let kept = elements.enumerated().filter { keeps($0.element) }.map { ($0.offset, $0.element, sortValues(of: $0.element)) }
        let sorted = kept.sorted { a, b in compare(a.2, b.2) ?? (a.0 < b.0) }.map(\.1)
        let start = min(offset, sorted.count)
        return (Array(sorted[start..<(limit.map { min(sorted.count, start + $0) } ?? sorted.count)]), sorted.count)
    }

    /// How two elements' sort keys compare (nil: equal in every key).
    func compare(_ left: [JSON?], _ right: [JSON?]) -> Bool? {
        for (index, key) in order.enumerated() {
            let order = ViewOrdering.compare(left[index], right[index])
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return nil
    }
}

/// A key path inside an array element: its member names (`customer.name` is `["customer", "name"]`),
/// with array indexes written as numbers; no names: the element itself.
public struct ElementPath: Sendable, Hashable, CustomStringConvertible {
    /// The member names (or array indexes) from the element down.
    public var names: [String]

    /// The path through `names`; `[]` is the element itself.
    public init(_ names: [String]) {
        self.names = names
    }

    /// The value at the path in `element`, nil when there is none.
    public func value(in element: JSON) -> JSON? {
        var current = element
        for name in names {
            switch current {
            case .object(let members):
                guard let next = members[name] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(name), index >= 0, index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The dotted form, as written in a view (`customer.name`).
    public var description: String { names.joined(separator: ".") }
}

/// A filter over array elements: comparisons of an element's key path with values, combined with
/// `and`, `or` and `not`. It only reads the element: no code runs.
public indirect enum ViewPredicate: Sendable, Hashable {
    /// What a comparison tests.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// Equal as JSON (`1` equals `1.0`).
        case eq, ne
        /// Numbers with numbers, strings with strings (by Unicode scalars); anything else is false.
        case lt, le, gt, ge
        /// An array holding the value, or a string holding the string.
        case contains
        /// A string starting with the string.
        case prefix
        /// A string holding the string, ignoring case (a search box).
        case match
        /// Equal to one of the values.
        case `in`
    }

    /// The element's value at the path, tested with the operator against the values (one, or `in`'s list).
    case compare(ElementPath, Operator, [JSON])
    /// Every part holds.
    case and([ViewPredicate])
    /// One part holds.
    case or([ViewPredicate])
    /// The part does not hold.
    case not(ViewPredicate)

    /// Whether `element` passes.
    public func holds(for element: JSON) -> Bool {
        switch self {
        case .and(let parts): return parts.allSatisfy { $0.holds(for: element) }
        case .or(let parts): return parts.contains { $0.holds(for: element) }
        case .not(let part): return !part.holds(for: element)
        case .compare(let path, let op, let values):
            guard let found = path.value(in: element) else { return op == .ne }
            guard let value = values.first else { return false }
            switch op {
            case .eq: return found == value
            case .ne: return found != value
            case .lt, .le, .gt, .ge:
                guard let order = ViewOrdering.compareSameKind(found, value) else { return false }
                switch op {
                case .lt: return order < 0
                case .le: return order <= 0
                case .gt: return order > 0
                default: return order >= 0
                }
            case .contains:
                switch (found, value) {
                case (.array(let elements), _): return elements.contains(value)
                case (.string(let text), .string(let part)):
                    var search = ScalarSearch(Array(part.unicodeScalars))
                    for scalar in text.unicodeScalars where search.feed(scalar) { return true }
                    return search.found
                default: return false
                }
            case .prefix:
                guard case .string(let text) = found, case .string(let start) = value else { return false }
                return text.unicodeScalars.starts(with: start.unicodeScalars)
            case .match:
                // Case-folded scalar by scalar as the search runs: the element's string is never copied
                // (lowercasing it whole took a copy of it per `match` term and element).
                guard case .string(let text) = found, case .string(let part) = value else { return false }
                var wanted: [Unicode.Scalar] = []
                for scalar in part.unicodeScalars { scalar.appendLowercased(to: &wanted) }
                var search = ScalarSearch(wanted)
                for scalar in text.unicodeScalars where scalar.feedLowercased(to: &search) { return true }
                return search.found
            case .in:
                return values.contains(found)
            }
        }
    }
}

/// The one order of JSON values that sorting uses: missing < null < false < true < numbers < strings
/// < arrays < objects; numbers by value, strings by Unicode scalars, arrays element by element,
/// objects by their encoded text.
enum ViewOrdering {
    static func compare(_ left: JSON?, _ right: JSON?) -> Int {
        guard let left else { return right == nil ? 0 : -1 }
        guard let right else { return 1 }
        if let order = compareSameKind(left, right) { return order }
        let (a, b) = (rank(left), rank(right))
        if a != b { return a < b ? -1 : 1 }
        switch (left, right) {
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (x ? 1 : -1)
        case (.array(let x), .array(let y)):
            for (p, q) in zip(x, y) {
                let order = compare(p, q)
                if order != 0 { return order }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.object, .object):
            return compareScalars(left.description, right.description)
        default: return 0
        }
    }

    /// Numbers with numbers (exactly, an integer with a double too) and strings with strings; nil for
    /// other pairs.
    static func compareSameKind(_ left: JSON, _ right: JSON) -> Int? {
        switch (left, right) {
        case (.int(let x), .int(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.double(let x), .double(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.double(let x), .int(let y)): return compare(x, y)
        case (.int(let x), .double(let y)): return -compare(y, x)
        case (.string(let x), .string(let y)): return compareScalars(x, y)
        default: return nil
        }
    }

    /// A double against an integer without rounding the integer (as a Double, 2^53 + 1 would equal 2^53).
    private static func compare(_ double: Double, _ integer: Int) -> Int {
        if double < -9_223_372_036_854_775_808.0 { return -1 }
        if double >= 9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.down)
        let part = Int(whole)
        if part != integer { return part < integer ? -1 : 1 }
        return double > whole ? 1 : 0
    }

    private static func compareScalars(_ x: String, _ y: String) -> Int {
        if x.unicodeScalars.elementsEqual(y.unicodeScalars) { return 0 }
        return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) ? -1 : 1
    }

    private static func rank(_ value: JSON) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .double: 2
        case .string: 3
        case .array: 4
        case .object: 5
        }
    }
}

/// A search for one string of Unicode scalars in a text fed to it scalar by scalar: Knuth–Morris–Pratt,
/// linear in both lengths (a naive search of a long text for a long, almost matching string costs
/// their product).
struct ScalarSearch {
    private let wanted: [Unicode.Scalar]
    private var fallback: [Int]
    private var matched = 0
    /// Whether the text fed so far holds the string.
    private(set) var found: Bool

    init(_ wanted: [Unicode.Scalar]) {
        self.wanted = wanted
        found = wanted.isEmpty
        fallback = [0]
        var matched = 0
        for index in wanted.indices.dropFirst() {
            while matched > 0 && wanted[index] != wanted[matched] { matched = fallback[matched - 1] }
            if wanted[index] == wanted[matched] { matched += 1 }
            fallback.append(matched)
        }
    }

    /// Takes the text's next scalar; true once the string has been found.
    mutating func feed(_ scalar: Unicode.Scalar) -> Bool {
        if found { return true }
        while matched > 0 && scalar != wanted[matched] { matched = fallback[matched - 1] }
        if scalar == wanted[matched] { matched += 1 }
        if matched == wanted.count { found = true }
        return found
    }
}

extension Unicode.Scalar {
    /// Appends the scalar lowercased, as `String.lowercased()` maps it (one scalar may become several).
    fileprivate func appendLowercased(to scalars: inout [Unicode.Scalar]) {
        if isASCII {
            scalars.append(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(UInt8(value) + 0x20) : self)
        } else if properties.changesWhenLowercased {
            scalars.append(contentsOf: properties.lowercaseMapping.unicodeScalars)
        } else {
            scalars.append(self)
        }
    }

    /// Feeds the scalar lowercased (as `appendLowercased`) to `search`; true once it found its string.
    fileprivate func feedLowercased(to search: inout ScalarSearch) -> Bool {
        if isASCII { return search.feed(value >= 0x41 && value <= 0x5A ? Unicode.Scalar(UInt8(value) + 0x20) : self) }
        guard properties.changesWhenLowercased else { return search.feed(self) }
        for scalar in properties.lowercaseMapping.unicodeScalars where search.feed(scalar) { return true }
        return false
    }
}
