import OrderedCollections
import DequeModule

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
/// The members and elements of the open containers wait on shared stacks (`values`, `keys`); when a
/// container closes, they move into its own storage, made at its final size in one allocation. Objects
/// with the keys of the object before them at the same depth (the rows of an array) share that one's
/// keys (see `ObjectShape`): their keys are compared with its bytes and never made into strings.
struct JSONParser: ~Copyable {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    /// The values parsed so far in the open containers, outermost first.
    private var values: ParseStack<JSON>
    /// The keys of the open objects' members that did not follow a shape, in step with their values.
    private var keys: ParseStack<String>
    /// A fingerprint of each key in `keys` (see `parseKey`), to tell most keys apart without comparing.
    private var keyPrints: ParseStack<UInt64>
    /// The open arrays and objects, innermost last.
    private var containers: ParseStack<Container>
    /// By depth: the shape the next object there is expected to have.
    private var shapes: [ObjectShape?] = []
    /// By depth: the keys of the last object there that had no shape, which becomes a shape when the
    /// next object has the same keys.
    private var candidates: [ContiguousArray<String>] = []
    /// A fingerprint of the last string parsed, or 0 when it must be compared in full.
    var lastStringPrint: UInt64 = 0
    /// Short keys seen so far, to make each only once.
    var keyCache = KeyCache()

    /// An open array or object: where its values (and keys) start on the shared stacks.
    private struct Container {
        let isObject: Bool
        let firstValue: Int
        let firstKey: Int
        /// The shape its keys are compared with, if any, and its matcher. Unmanaged, to keep a
        /// container a plain value that costs nothing to copy: `shapes` holds the shape, and only an
        /// object at the same depth closing (after this one) can replace it there.
        let shape: Unmanaged<ObjectShape>?
        let matcher: KeyMatcher?
        /// How many of its keys were the shape's, in order; -1 once one was not.
        var matched: Int
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        // A value takes at least two bytes of text with its separator, and most large texts are long
        // arrays: room for one value per 64 bytes saves most of the stack's doublings (and copies).
        // A short text (a write's body is often one number) gets stacks only as large as it can fill:
        // the full-size four would be 7 KiB of allocations for every parse.
        let fits = bytes.count / 2 + 1
        values = ParseStack(capacity: min(max(bytes.count / 64, 64), 1 << 16, fits))
        keys = ParseStack(capacity: min(64, fits))
        keyPrints = ParseStack(capacity: min(64, fits))
        containers = ParseStack(capacity: min(64, fits))
    }

    mutating func parseDocument() throws(JSONError) -> JSON {
        skipWhitespace()
        nextValue: while true {
            // One value onto the stack: a scalar or an empty container; or the opening of a container
            // (then its first value).
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard containers.count < maxDepth else { throw .tooDeep(maxDepth: maxDepth, offset: position) }
                let isObject = byte == UInt8(ascii: "{")
                position += 1
                skipWhitespace()
                if try peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    position += 1
                    values.push(isObject ? .object([:]) : .array([]))
                } else {
                    open(isObject: isObject)
                    if isObject { try parseKey() }
                    continue nextValue
                }
            case UInt8(ascii: "\""): values.push(.string(try parseString()))
            case UInt8(ascii: "t"): values.push(try expect("true", as: .bool(true)))
            case UInt8(ascii: "f"): values.push(try expect("false", as: .bool(false)))
            case UInt8(ascii: "n"): values.push(try expect("null", as: .null))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): values.push(try parseNumber())
            case UInt8(ascii: "N"), UInt8(ascii: "I"): throw .invalidNumber(offset: position)
            default: throw .unexpectedByte(byte, offset: position)
            }
            // A complete value, on top of the stack: it belongs to the innermost container, which may end
            // after it (and so on out). Values never leave the stack but into their container, so none
            // is copied on the way.
            while containers.count > 0 {
                let container = containers.top.pointee
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
                let closed = container.isObject ? closeObject(container) : closeArray(container)
                _ = containers.pop()
                values.push(closed)
            }
            break
        }
        skipWhitespace()
        guard position == bytes.count else { throw .trailingGarbage(offset: position) }
        return values.pop()
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    @inline(__always)
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

    /// Opens an array or object at the next depth; an object expects the shape last seen there.
    private mutating func open(isObject: Bool) {
        let depth = containers.count
        var shape: ObjectShape?
        if isObject, depth < shapes.count { shape = shapes[depth] }
        containers.push(
            Container(
                isObject: isObject, firstValue: values.count, firstKey: keys.count,
                shape: shape.map { Unmanaged.passUnretained($0) }, matcher: shape?.matcher, matched: 0))
    }

    /// Parses `"key" :` (with whitespace around the colon): as the next key of the innermost object's
    /// shape when its bytes are that key's, else onto the key stack.
    private mutating func parseKey() throws(JSONError) {
        let byte = try peek()
        guard byte == UInt8(ascii: "\"") else { throw .unexpectedByte(byte, offset: position) }
        let container = containers.top
        let matched = container.pointee.matched
        if matched >= 0, let matcher = container.pointee.matcher, matched < matcher.count,
            let (length, colon) = matcher.match(
                matched, at: bytes.baseAddress! + position + 1, available: bytes.count - position - 1)
        {
            position += 1 + length
            container.pointee.matched = matched + 1
            if colon {
                skipWhitespace()
                return
            }
        } else {
            spillShapeKeys(container.pointee)
            container.pointee.matched = -1
            keys.push(try parseString(interning: true))
            keyPrints.push(lastStringPrint)
        }
        skipWhitespace()
        let colon = try peek()
        guard colon == UInt8(ascii: ":") else { throw .unexpectedByte(colon, offset: position) }
        position += 1
        skipWhitespace()
    }

    /// Puts the keys that `container` matched of its shape on the key stack, as if parsed, when it
    /// turns out not to have that shape after all.
    private mutating func spillShapeKeys(_ container: Container) {
        guard container.matched > 0, let shape = container.shape?.takeUnretainedValue() else { return }
        for index in 0..<container.matched {
            keys.push(shape.keys[index])
            keyPrints.push(0)
        }
    }

    /// The array of the values from `container.firstValue` on, moved off the stack.
    private mutating func closeArray(_ container: Container) -> JSON {
        let count = values.count - container.firstValue
        let elements = Deque<JSON>(unsafeUninitializedCapacity: count) { buffer, initialized in
            values.moveTop(from: container.firstValue, to: buffer.baseAddress!)
            initialized = count
        }
        return .array(elements)
    }

    /// The object of the keys and values from the container's first on, moved off the stacks.
    private mutating func closeObject(_ container: Container) -> JSON {
        let count = values.count - container.firstValue
        let memberValues = values.popTop(from: container.firstValue)
        if let shape = container.shape?.takeUnretainedValue(), container.matched == shape.keys.count {
            return .object(OrderedDictionary(uncheckedUniqueKeys: shape.keys, values: memberValues))
        }
        spillShapeKeys(container)
        if mayHaveDuplicateKeys(from: container.firstKey) {
            // Of duplicate keys the last value wins, at the first one's place.
            var members = OrderedDictionary<String, JSON>(minimumCapacity: count)
            for (offset, value) in memberValues.enumerated() { members[keys[container.firstKey + offset]] = value }
            keys.removeTop(from: container.firstKey)
            keyPrints.removeTop(from: container.firstKey)
            return .object(members)
        }
        let memberKeys = keys.popTop(from: container.firstKey)
        keyPrints.removeTop(from: container.firstKey)
        return .object(OrderedDictionary(uncheckedUniqueKeys: remember(memberKeys), values: memberValues))
    }

    /// The keys an object without a shape will hold: when they are the last such object's at this
    /// depth, that one's (shared, and now a shape), else these, remembered for the next object.
    private mutating func remember(_ memberKeys: ContiguousArray<String>) -> ContiguousArray<String> {
        let depth = containers.count - 1
        while candidates.count <= depth {
            candidates.append([])
            shapes.append(nil)
        }
        let candidate = candidates[depth]
        guard candidate == memberKeys else {
            candidates[depth] = memberKeys
            return memberKeys
        }
        if let shape = ObjectShape(keys: candidate) {
            shapes[depth] = shape
            candidates[depth] = []
        }
        return candidate
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
