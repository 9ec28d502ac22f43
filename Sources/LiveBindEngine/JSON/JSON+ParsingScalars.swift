extension JSONParser {
    /// Parses a string starting at its opening quote. Strings without escapes are decoded straight from
    /// the input (scanned eight bytes at a time); only strings with escapes are assembled in a buffer.
    /// Sets `lastStringPrint` for keys. Keys (`interning`) of up to 16 ASCII bytes come from `keyCache` when
    /// an earlier key had the same bytes: objects in an array mostly repeat their keys.
    mutating func parseString(interning: Bool = false) throws(JSONError) -> String {
        let start = position
        position += 1
        let contentStart = position
        lastStringPrint = 0
        // The opening quote is in the buffer, so it has a base address.
        let base = bytes.baseAddress!
        var highBits: UInt64 = 0
        while position + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            if JSONWriter.anyNeedsEscape(word) { break }
            highBits |= word
            position += 8
        }
        while position < bytes.count {
            let byte = base[position]
            if byte == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(start: base + contentStart, count: position - contentStart)
                position += 1
                if highBits & 0x8080_8080_8080_8080 == 0 {
                    // ASCII: valid UTF-8 as it is. Only keys need a fingerprint.
                    guard interning else { return Self.makeString(ascii: content) }
                    let (print, words) = Self.fingerprint(content)
                    lastStringPrint = print
                    return internedKey(content, print: print, words: words)
                }
                guard let string = String(validating: content, as: UTF8.self) else {
                    throw .invalidUTF8(offset: start)
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .controlCharacterInString(offset: position) }
            highBits |= UInt64(byte)
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

    /// A string of the ASCII bytes `content`. Up to 15 bytes, through the initializer that fills a
    /// small string in place and checks it with one mask (`String(decoding:as:)` validates and copies
    /// byte by byte, which costs more than the rest of parsing a short string).
    @inline(__always)
    static func makeString(ascii content: UnsafeBufferPointer<UInt8>) -> String {
        guard content.count <= 15, let source = content.baseAddress else {
            return String(decoding: content, as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: content.count) { target in
            JSONWriter.copy(source, to: target.baseAddress!, count: content.count)
            return content.count
        }
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

    /// A fingerprint of ASCII text and the words it was made from: equal texts have equal ones, so
    /// different fingerprints mean different keys. Never 0, which marks a string that must be compared
    /// in full. Up to 16 bytes, the length and the two words are the text itself.
    private static func fingerprint(_ text: UnsafeBufferPointer<UInt8>) -> (UInt64, (UInt64, UInt64)) {
        let count = text.count
        var words: (UInt64, UInt64) = (0, 0)
        if let base = text.baseAddress {
            let raw = UnsafeRawPointer(base)
            if count >= 8 {
                words = (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            } else if count >= 4 {
                words.0 =
                    UInt64(raw.loadUnaligned(as: UInt32.self))
                    | UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)) << 32
            } else {
                for index in 0..<count { words.0 |= UInt64(base[index]) << (8 * index) }
            }
        }
        let print = ((UInt64(count) &* 0x9E37_79B9_7F4A_7C15 ^ words.0) &* 0xFF51_AFD7_ED55_8CCD) ^ words.1
        return (print | 1, words)
    }

    /// The key with the bytes `content`, from `keyCache` when it holds it, else made and remembered.
    private mutating func internedKey(_ content: UnsafeBufferPointer<UInt8>, print: UInt64, words: (UInt64, UInt64)) -> String {
        guard content.count <= 16 else { return String(decoding: content, as: UTF8.self) }
        let slot = Int(truncatingIfNeeded: (print >> 7) & UInt64(KeyCache.size - 1))
        if let hit = keyCache.lookup(slot: slot, count: content.count, words: words) { return hit }
        let key = Self.makeString(ascii: content)
        keyCache.store(key, slot: slot, count: content.count, words: words)
        return key
    }

    /// Parses a number per the RFC 8259 grammar: `.int` when it is integral and fits, else a finite `.double`.
    ///
    /// The digits are accumulated as they are checked. Integers of up to 18 digits cannot overflow; a
    /// decimal of up to 19 digits with a power of ten up to 22 either way is two exact doubles whose
    /// product or quotient is correctly rounded, as `Double(String)` would round it. Anything else is
    /// read by `Double(String)`.
    mutating func parseNumber() throws(JSONError) -> JSON {
        let start = position
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
        let digitsStart = position
        var mantissa: UInt64 = 0
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw .invalidNumber(offset: start) }
        } else {
            accumulateDigits(into: &mantissa)
        }
        let integerDigits = position - digitsStart
        var isInteger = true
        var fractionDigits = 0
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            let fractionStart = position
            accumulateDigits(into: &mantissa)
            fractionDigits = position - fractionStart
        }
        var exponent = 0
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw .invalidNumber(offset: start) }
            while position < bytes.count, isDigit(bytes[position]) {
                // Past 10,000 only `Double(String)` can tell what it means; stop counting there.
                if exponent < 10_000 { exponent = exponent * 10 + Int(bytes[position] &- UInt8(ascii: "0")) }
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if isInteger {
            if integerDigits <= 18 {
                let magnitude = Int(mantissa)
                return .int(negative ? -magnitude : magnitude)
            }
            if let integer = integerValue(from: digitsStart, negative: negative) { return .int(integer) }
        } else if integerDigits + fractionDigits <= 19, mantissa <= 1 << 53 {
            let power = exponent - fractionDigits
            if power >= -22, power <= 22 {
                let scale = Self.powersOfTen[Int(power.magnitude)]
                let magnitude = power < 0 ? Double(mantissa) / scale : Double(mantissa) * scale
                return .double(negative ? -magnitude : magnitude)
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw .numberOutOfRange(offset: start) }
        return .double(double)
    }

    /// 10⁰ through 10²², every one exact as a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
    ]

    /// Reads digits up to the first non-digit, adding them to `value` (wrapping: callers only use it
    /// when there are few enough digits not to).
    @inline(__always)
    private mutating func accumulateDigits(into value: inout UInt64) {
        while position < bytes.count {
            let digit = bytes[position] &- UInt8(ascii: "0")
            guard digit < 10 else { return }
            value = value &* 10 &+ UInt64(digit)
            position += 1
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
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
