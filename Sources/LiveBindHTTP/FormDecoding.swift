/// `application/x-www-form-urlencoded` bodies: `a=1&b.c=x+y` → [("a", "1"), ("b.c", "x y")].
package enum FormDecoding {
    /// Decodes name/value pairs in order; throws on bad percent escapes or invalid UTF-8.
    package static func pairs(_ body: [UInt8]) throws(RequestError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for field in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = field.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0])
            let value = parts.count > 1 ? try decode(parts[1]) : ""
            pairs.append((name, value))
        }
        return pairs
    }

    /// Percent-decodes one component (`+` is a space).
    static func decode(_ bytes: ArraySlice<UInt8>) throws(RequestError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else {
                    throw .malformedBody("bad percent escape in form data at byte \(index - bytes.startIndex)")
                }
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw .malformedBody("form data is not valid UTF-8")
        }
        return text
    }

    /// The value of one hex digit (`0-9 a-f A-F`); also used to decode URLs (`unescapeTrampoline`).
    static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
