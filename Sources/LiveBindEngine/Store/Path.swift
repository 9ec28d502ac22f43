/// A location inside a model: a list of member names and array indices, parsed once.
///
/// Written dotted in Swift, HTML and binding files (`readings.3.value`) and as an RFC 6901 JSON Pointer on
/// the wire (`/readings/3/value`). A component is used as an array index when the value at that point is
/// an array and the component is a canonical non-negative integer (`0`, `12`; never `01`, `-1`, `+1`);
/// `-` means "past the end" of an array.
public struct Path: Sendable, Hashable, CustomStringConvertible {
    /// The unescaped components, outermost first. Empty for the root.
    public var components: [String]

    /// The whole model.
    public static let root = Path([])

    /// A path made of already unescaped components.
    public init(_ components: [String]) {
        self.components = components
    }

    /// Parses a dotted key path such as `readings.3.value`; `""` is the root.
    public init(dotted: String) throws(PathError) {
        if dotted.isEmpty {
            self.components = []
            return
        }
        // Split on scalars, not Characters: a "." followed by a combining mark is still a separator.
        var components: [String] = []
        let parts = dotted.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            guard !part.isEmpty else { throw .emptyComponent(dotted: dotted, index: index) }
            components.append(String(String.UnicodeScalarView(part)))
        }
        self.components = components
    }

    /// Parses an RFC 6901 JSON Pointer such as `/readings/3/value`; `""` is the root.
    public init(pointer: String) throws(PathError) {
        if pointer.isEmpty {
            self.components = []
            return
        }
        guard pointer.utf8.first == UInt8(ascii: "/") else { throw .missingLeadingSlash(pointer: pointer) }
        // Walk scalars, not Characters: a "/" or "~" followed by a combining mark must not merge with it.
        var components: [String] = []
        var current = String.UnicodeScalarView()
        var offset = 1
        var iterator = pointer.unicodeScalars.dropFirst().makeIterator()
        while let scalar = iterator.next() {
            switch scalar {
            case "/":
                components.append(String(current))
                current = String.UnicodeScalarView()
            case "~":
                switch iterator.next() {
                case "0": current.append("~"); offset += 1
                case "1": current.append("/"); offset += 1
                default: throw .invalidEscape(pointer: pointer, offset: offset)
                }
            default:
                current.append(scalar)
            }
            offset += 1
        }
        components.append(String(current))
        self.components = components
    }

    /// The RFC 6901 form, with `~` written `~0` and `/` written `~1`.
    public var pointer: String {
        var result = ""
        for component in components {
            result.append("/")
            if component.unicodeScalars.contains(where: { $0 == "~" || $0 == "/" }) {
                for scalar in component.unicodeScalars {
                    switch scalar {
                    case "~": result.append("~0")
                    case "/": result.append("~1")
                    default: result.unicodeScalars.append(scalar)
                    }
                }
            } else {
                result.append(component)
            }
        }
        return result
    }

    /// The dotted form (`readings.3.value`); `""` for the root.
    public var dotted: String {
        components.joined(separator: ".")
    }

    /// The JSON Pointer form, which is unambiguous for every key.
    public var description: String {
        pointer
    }

    /// The path one level up, or `nil` for the root.
    public var parent: Path? {
        components.isEmpty ? nil : Path(Array(components.dropLast()))
    }

    /// The last component, or `nil` for the root.
    public var last: String? {
        components.last
    }

    /// Whether this is the root path.
    public var isRoot: Bool {
        components.isEmpty
    }

    /// This path with one more component.
    public func appending(_ component: String) -> Path {
        Path(components + [component])
    }

    /// This path with an array index appended.
    public func appending(index: Int) -> Path {
        appending(String(index))
    }

    /// Whether `other` starts with every component of this path (a path is a prefix of itself; the root
    /// is a prefix of everything).
    public func isPrefix(of other: Path) -> Bool {
        guard components.count <= other.components.count else { return false }
        for index in components.indices where components[index] != other.components[index] {
            return false
        }
        return true
    }

    /// The component as an array index when it is a canonical non-negative integer (`0`, `12`); one
    /// too large for an `Int` is `Int.max`, past the end of any array (so it is out of range there,
    /// not a member name that is not found).
    package static func arrayIndex(_ component: String) -> Int? {
        var component = component
        return component.withUTF8 { bytes -> Int? in
            guard let first = bytes.first, first &- UInt8(ascii: "0") < 10 else { return nil }
            if first == UInt8(ascii: "0") { return bytes.count == 1 ? 0 : nil }
            var value = 0
            for byte in bytes {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (tens, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = tens.addingReportingOverflow(Int(digit))
                value = overflow || carry ? .max : sum
            }
            return value
        }
    }
}
