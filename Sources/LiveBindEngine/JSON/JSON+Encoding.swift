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
        // The values every event carries (a model's name, a pointer, a small number) go straight into
        // the buffer: a writer would be an allocation for a few bytes. Strings that need an escape take
        // the writer.
        switch self {
        case .int(let value):
            return buffer.appendDecimal(value)
        case .null:
            return buffer += "null".utf8
        case .bool(let value):
            return buffer += (value ? "true" : "false").utf8
        case .string(var text):
            // The writer's own test: a string it would copy whole between quotes is copied here.
            let plain = text.withUTF8 { bytes in
                bytes.baseAddress.map { !JSONWriter.anyNeedsEscape($0, count: bytes.count) } ?? true
            }
            if plain {
                buffer.append(UInt8(ascii: "\""))
                buffer += text.utf8
                return buffer.append(UInt8(ascii: "\""))
            }
        default:
            break
        }
        var writer = JSONWriter(capacity: initialCapacity)
        write(to: &writer)
        writer.append(to: &buffer)
    }

    /// A guess at the encoded size from the first elements of containers, two levels down, so that
    /// most encodings allocate once. A guess short of the size only costs a doubling or two.
    private var initialCapacity: Int {
        estimatedSize(levels: 3) + 64
    }

    private func estimatedSize(levels: Int) -> Int {
        switch self {
        case .null, .bool: return 5
        case .int, .double: return 12
        case .string(let value): return value.utf8.count + 2
        case .array(let elements):
            guard let first = elements.first, levels > 0 else { return 2 + elements.count * 8 }
            return 2 + elements.count * (first.estimatedSize(levels: levels - 1) + 1)
        case .object(let members):
            guard levels > 0 else { return 2 + members.count * 16 }
            var size = 2
            for (key, value) in members.prefix(8) {
                size += key.utf8.count + 4 + value.estimatedSize(levels: levels - 1)
            }
            return members.count > 8 ? size * members.count / 8 : size
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
            // Rows repeat their keys: from here on, copy the text of keys written before.
            if elements.count >= 8 { writer.rememberKeys() }
            // Straight through the storage when it is in one piece (as a parsed or appended-to array
            // is), which saves a retain and release per element.
            let written: Void? = elements.withContiguousStorageIfAvailable { elements in
                for index in elements.indices {
                    if index > 0 { writer.append(UInt8(ascii: ",")) }
                    elements[index].write(to: &writer)
                }
            }
            if written == nil {
                for (index, element) in elements.enumerated() {
                    if index > 0 { writer.append(UInt8(ascii: ",")) }
                    element.write(to: &writer)
                }
            }
            writer.append(UInt8(ascii: "]"))
        case .object(let members):
            writer.append(UInt8(ascii: "{"))
            let keys = members.keys.elements
            keys.withUnsafeBufferPointer { keys in
                members.values.withUnsafeBufferPointer { values in
                    for index in keys.indices {
                        if index > 0 { writer.append(UInt8(ascii: ",")) }
                        writer.writeKey(keys[index], at: index)
                        values[index].write(to: &writer)
                    }
                }
            }
            writer.append(UInt8(ascii: "}"))
        }
    }
}
