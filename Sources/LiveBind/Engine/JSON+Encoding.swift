extension JSON {
    /// The compact UTF-8 JSON text of this value. `description` is the same text as a `String`.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: initialCapacity)
        write(to: &writer)
        return writer.bytes()
    }

    /// Appends the compact UTF-8 JSON text of this value to `buffer`.
    ///
    /// Integers are written as integers, doubles in the shortest form that parses back to the same
    /// double (as Swift's `description` writes them). A non-finite double (which cannot be stored in a
    /// model) is written as `null`.
    public func encode(into buffer: inout [UInt8]) {
        var writer = JSONWriter(capacity: initialCapacity)
        write(to: &writer)
        writer.append(to: &buffer)
    }

    /// A first guess at the encoded size, so that small values take one allocation and large
    /// containers few: 16 bytes per element or member.
    private var initialCapacity: Int {
        switch self {
        case .string(let value): value.utf8.count + 16
        case .array(let elements): elements.count * 16 + 16
        case .object(let members): members.count * 16 + 16
        default: 32
        }
    }

    /// Writes this value's text. Recurses once per level of nesting, which the store's and the
    /// parser's depth limits bound.
    func write(to writer: inout JSONWriter) {
        switch self {
        case .null:
            writer.append("null")
        case .bool(let value):
            writer.append(value ? "true" : "false")
        case .int(let value):
            writer.writeInteger(value)
        case .double(let value):
            writer.writeDouble(value)
        case .string(let value):
            writer.writeString(value)
        case .array(let elements):
            writer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { writer.append(UInt8(ascii: ",")) }
                first = false
                element.write(to: &writer)
            }
            writer.append(UInt8(ascii: "]"))
        case .object(let members):
            writer.append(UInt8(ascii: "{"))
            let keys = members.keys
            let values = members.values
            for index in 0..<members.count {
                if index > 0 { writer.append(UInt8(ascii: ",")) }
                writer.writeString(keys[index])
                writer.append(UInt8(ascii: ":"))
                values[index].write(to: &writer)
            }
            writer.append(UInt8(ascii: "}"))
        }
    }
}
