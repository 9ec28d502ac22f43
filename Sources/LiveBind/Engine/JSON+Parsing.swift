import Collections

extension JSON {
    /// Parses strict RFC 8259 JSON text from UTF-8 bytes.
    ///
    /// Rejects invalid UTF-8, unpaired surrogates in `\u` escapes, trailing data, leading zeros, `NaN` and
    /// `Infinity`, numbers that overflow a `Double` (`1e400`), and nesting deeper than `maxDepth`.
    /// Integers that fit an `Int` become `.int`, other numbers `.double`. Of duplicate keys the last wins.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = 512) throws(JSONError) {
        let parsed: Result<JSON, JSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            return Result { () throws(JSONError) in try parser.parseDocument() }
        }
        if let parsed {
            self = try parsed.get()
        } else {
            let copy = Array(bytes)
            self = try copy.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSON in
                var parser = JSONParser(buffer, maxDepth: maxDepth)
                return try parser.parseDocument()
            }
        }
    }

    /// Parses strict RFC 8259 JSON text; see ``init(parsing:maxDepth:)-(Collection<UInt8>,_)``.
    public init(parsing text: String, maxDepth: Int = 512) throws(JSONError) {
        try self.init(parsing: text.utf8, maxDepth: maxDepth)
    }
}

/// A parser over a contiguous byte buffer, with explicit stacks instead of recursion: however deep
/// the text nests, the call stack does not grow, and `maxDepth` bounds the stacks.
///
/// The members and elements of the open containers wait on two shared stacks (`values`, `keys`);
/// when a container closes, its own storage is made at its final size, in one allocation.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    /// The values parsed so far in the open containers, outermost first.
    private var values: [JSON] = []
    /// The keys of the open objects' members, in step with their values.
    private var keys: [String] = []
    /// A fingerprint of each key in `keys` (see `parseKey`), to tell most keys apart without comparing.
    private var keyPrints: [UInt64] = []
    /// The open arrays and objects, innermost last.
    private var containers: [Container] = []
    /// A fingerprint of the last string parsed, or 0 when it must be compared in full.
    var lastStringPrint: UInt64 = 0
    /// Short keys seen so far, to make each only once.
    var keyCache = KeyCache()

    /// An open array or object: where its values (and keys) start on the shared stacks.
    private struct Container {
        let isObject: Bool
        let firstValue: Int
        let firstKey: Int
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSON {
        skipWhitespace()
        var value: JSON
        nextValue: while true {
            // One value: a scalar, an empty container, or the opening of a container (then its first value).
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard containers.count < maxDepth else { throw .tooDeep(maxDepth: maxDepth, offset: position) }
                let isObject = byte == UInt8(ascii: "{")
                position += 1
                skipWhitespace()
                if try peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    position += 1
                    value = isObject ? .object([:]) : .array([])
                } else {
                    containers.append(Container(isObject: isObject, firstValue: values.count, firstKey: keys.count))
                    if isObject { try parseKey() }
                    continue nextValue
                }
            case UInt8(ascii: "\""): value = .string(try parseString())
            case UInt8(ascii: "t"): value = try expect("true", as: .bool(true))
            case UInt8(ascii: "f"): value = try expect("false", as: .bool(false))
            case UInt8(ascii: "n"): value = try expect("null", as: .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try parseNumber()
            case UInt8(ascii: "N"), UInt8(ascii: "I"): throw .invalidNumber(offset: position)
            default: throw .unexpectedByte(byte, offset: position)
            }
            // A complete value: it joins the innermost container, which may end after it (and so on out).
            while let container = containers.last {
                values.append(value)
                skipWhitespace()
                let next = try peek()
                position += 1
                if next == UInt8(ascii: ",") {
                    skipWhitespace()
                    if container.isObject { try parseKey() }
                    continue nextValue
                }
                guard next == (container.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw .unexpectedByte(next, offset: position - 1)
                }
                value = container.isObject ? closeObject(container) : closeArray(container)
                containers.removeLast()
            }
            break
        }
        skipWhitespace()
        guard position == bytes.count else { throw .trailingGarbage(offset: position) }
        return value
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() throws(JSONError) -> UInt8 {
        guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
        return bytes[position]
    }

    private mutating func expect(_ literal: StaticString, as value: JSON) throws(JSONError) -> JSON {
        for index in 0..<literal.utf8CodeUnitCount {
            guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
            guard bytes[position] == literal.utf8Start[index] else {
                throw .unexpectedByte(bytes[position], offset: position)
            }
            position += 1
        }
        return value
    }

    /// Parses `"key" :` (with whitespace around the colon) onto the key stack.
    private mutating func parseKey() throws(JSONError) {
        let byte = try peek()
        guard byte == UInt8(ascii: "\"") else { throw .unexpectedByte(byte, offset: position) }
        keys.append(try parseString(interning: true))
        keyPrints.append(lastStringPrint)
        skipWhitespace()
        let colon = try peek()
        guard colon == UInt8(ascii: ":") else { throw .unexpectedByte(colon, offset: position) }
        position += 1
        skipWhitespace()
    }

    /// The array of the values from `container.firstValue` on, taken off the stack.
    private mutating func closeArray(_ container: Container) -> JSON {
        let elements = Deque(values[container.firstValue...])
        values.removeSubrange(container.firstValue...)
        return .array(elements)
    }

    /// The object of the keys and values from the container's first on, taken off the stacks.
    private mutating func closeObject(_ container: Container) -> JSON {
        let members = makeMembers(container)
        // Only now, with no slice of them left, do the stacks shrink (else each would be copied).
        keys.removeSubrange(container.firstKey...)
        keyPrints.removeSubrange(container.firstKey...)
        values.removeSubrange(container.firstValue...)
        return .object(members)
    }

    /// The members of the object `container`: of duplicate keys the last value wins, at the first
    /// one's place.
    private func makeMembers(_ container: Container) -> OrderedDictionary<String, JSON> {
        let memberKeys = keys[container.firstKey...]
        let memberValues = values[container.firstValue...]
        guard mayHaveDuplicateKeys(from: container.firstKey) else {
            return OrderedDictionary(uncheckedUniqueKeys: memberKeys, values: memberValues)
        }
        var members = OrderedDictionary<String, JSON>(minimumCapacity: memberKeys.count)
        for (key, value) in zip(memberKeys, memberValues) { members[key] = value }
        return members
    }

    /// Whether two of the keys from `first` on may be equal. Keys with different fingerprints differ;
    /// the rest are compared as strings (Unicode canonical equivalence, as the dictionary compares
    /// them). For more than 16 members this says `true`, and the dictionary's own hashing decides.
    private func mayHaveDuplicateKeys(from first: Int) -> Bool {
        let count = keys.count - first
        guard count > 1 else { return false }
        guard count <= 16 else { return true }
        for later in (first + 1)..<keys.count {
            let laterPrint = keyPrints[later]
            for earlier in first..<later {
                let earlierPrint = keyPrints[earlier]
                if laterPrint == earlierPrint || laterPrint == 0 || earlierPrint == 0, keys[later] == keys[earlier] {
                    return true
                }
            }
        }
        return false
    }
}
