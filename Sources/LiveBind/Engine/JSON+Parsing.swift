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

/// A recursive-descent parser over a contiguous byte buffer.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var position = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSON {
        skipWhitespace()
        let value = try parseValue()
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

    private mutating func parseValue() throws(JSONError) -> JSON {
        switch try peek() {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", as: .bool(true))
        case UInt8(ascii: "f"): return try expect("false", as: .bool(false))
        case UInt8(ascii: "n"): return try expect("null", as: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "N"), UInt8(ascii: "I"): throw .invalidNumber(offset: position)
        case let byte: throw .unexpectedByte(byte, offset: position)
        }
    }

    private mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw .tooDeep(maxDepth: maxDepth, offset: position) }
    }

    private mutating func parseArray() throws(JSONError) -> JSON {
        try enter()
        position += 1
        var elements = Deque<JSON>()
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            let byte = try peek()
            position += 1
            if byte == UInt8(ascii: "]") { break }
            guard byte == UInt8(ascii: ",") else { throw .unexpectedByte(byte, offset: position - 1) }
        }
        depth -= 1
        return .array(elements)
    }

    private mutating func parseObject() throws(JSONError) -> JSON {
        try enter()
        position += 1
        var members = OrderedDictionary<String, JSON>()
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let byte = try peek()
            guard byte == UInt8(ascii: "\"") else { throw .unexpectedByte(byte, offset: position) }
            let key = try parseString()
            skipWhitespace()
            let colon = try peek()
            guard colon == UInt8(ascii: ":") else { throw .unexpectedByte(colon, offset: position) }
            position += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            let next = try peek()
            position += 1
            if next == UInt8(ascii: "}") { break }
            guard next == UInt8(ascii: ",") else { throw .unexpectedByte(next, offset: position - 1) }
        }
        depth -= 1
        return .object(members)
    }
}
