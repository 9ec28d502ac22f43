extension JSONParser {
    /// Parses a string starting at its opening quote. Strings without escapes are decoded straight from
    /// the input; only strings with escapes are assembled in a buffer.
    mutating func parseString() throws(JSONError) -> String {
        let start = position
        position += 1
        let contentStart = position
        var isASCII = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: bytes[contentStart..<position])
                position += 1
                if isASCII { return String(decoding: content, as: UTF8.self) }
                guard let string = String(validating: content, as: UTF8.self) else {
                    throw .invalidUTF8(offset: start)
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .controlCharacterInString(offset: position) }
            if byte >= 0x80 { isASCII = false }
            position += 1
        }
        guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
        var buffer = Array(bytes[contentStart..<position])
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw .invalidUTF8(offset: start)
                }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw .controlCharacterInString(offset: position)
            default:
                buffer.append(byte)
                position += 1
            }
        }
        throw .unexpectedEnd(offset: position)
    }

    /// Decodes one escape sequence starting at its backslash and appends its UTF-8 bytes.
    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONError) {
        let start = position
        position += 1
        guard position < bytes.count else { throw .unexpectedEnd(offset: position) }
        let letter = bytes[position]
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(letter)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: start)
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw .loneSurrogate(offset: start) }
                position += 2
                let low = try parseHex4(escapeStart: position - 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(offset: start) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw .loneSurrogate(offset: start)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw .loneSurrogate(offset: start) }
            buffer.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw .invalidEscape(offset: start)
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(JSONError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw .unexpectedEnd(offset: bytes.count) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .invalidEscape(offset: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// Parses a number per the RFC 8259 grammar: `.int` when it is integral and fits, else a finite `.double`.
    mutating func parseNumber() throws(JSONError) -> JSON {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw .invalidNumber(offset: start) }
        } else {
            skipDigits()
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            skipDigits()
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            skipDigits()
        }
        if isInteger, let integer = integerValue(from: start + (negative ? 1 : 0), negative: negative) {
            return .int(integer)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw .numberOutOfRange(offset: start) }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    private mutating func skipDigits() {
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    /// The digits from `digitsStart` to the current position as an `Int`, or `nil` when they overflow it.
    private func integerValue(from digitsStart: Int, negative: Bool) -> Int? {
        var value = 0
        for index in digitsStart..<position {
            let digit = Int(bytes[index] &- UInt8(ascii: "0"))
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
        }
        return value
    }
}
