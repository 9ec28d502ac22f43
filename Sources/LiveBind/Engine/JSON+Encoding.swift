extension JSON {
    /// The compact UTF-8 JSON text of this value. `description` is the same text as a `String`.
    public func encoded() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64)
        encode(into: &buffer)
        return buffer
    }

    /// Appends the compact UTF-8 JSON text of this value to `buffer`.
    ///
    /// Integers are written as integers, doubles in the shortest form that parses back to the same
    /// double. A non-finite double (which cannot be stored in a model) is written as `null`.
    public func encode(into buffer: inout [UInt8]) {
        switch self {
        case .null:
            buffer.append(contentsOf: "null".utf8)
        case .bool(let value):
            buffer.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .int(let value):
            Self.encodeInteger(value, into: &buffer)
        case .double(let value):
            Self.encodeDouble(value, into: &buffer)
        case .string(let value):
            Self.encodeString(value, into: &buffer)
        case .array(let elements):
            buffer.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                element.encode(into: &buffer)
            }
            buffer.append(UInt8(ascii: "]"))
        case .object(let members):
            buffer.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members {
                if !first { buffer.append(UInt8(ascii: ",")) }
                first = false
                Self.encodeString(key, into: &buffer)
                buffer.append(UInt8(ascii: ":"))
                value.encode(into: &buffer)
            }
            buffer.append(UInt8(ascii: "}"))
        }
    }

    private static func encodeInteger(_ value: Int, into buffer: inout [UInt8]) {
        if value == 0 {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        // Digits of the magnitude are appended least significant first, then reversed in place.
        var magnitude = value.magnitude
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        let start = buffer.count
        while magnitude > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        }
        buffer[start...].reverse()
    }

    private static func encodeDouble(_ value: Double, into buffer: inout [UInt8]) {
        guard value.isFinite else {
            buffer.append(contentsOf: "null".utf8)
            return
        }
        // Swift's description is the shortest text that round-trips ("0.1", "1e-05", "1.0", "1e+20"),
        // and every such form is valid JSON.
        var text = value.description
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func encodeString(_ value: String, into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                buffer.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer.append(byte)
                case 0x0A: buffer.append(UInt8(ascii: "n"))
                case 0x0D: buffer.append(UInt8(ascii: "r"))
                case 0x09: buffer.append(UInt8(ascii: "t"))
                case 0x08: buffer.append(UInt8(ascii: "b"))
                case 0x0C: buffer.append(UInt8(ascii: "f"))
                default:
                    buffer.append(contentsOf: "u00".utf8)
                    buffer.append(hexDigits[Int(byte >> 4)])
                    buffer.append(hexDigits[Int(byte & 0x0F)])
                }
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        buffer.append(UInt8(ascii: "\""))
    }
}
