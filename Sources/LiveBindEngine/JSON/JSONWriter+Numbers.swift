/// Numbers written straight into the buffer, without making a `String` first.
extension JSONWriter {
    /// Writes `value` in decimal.
    mutating func writeInteger(_ value: Int) {
        let size = JSON.integerSize(value)
        reserve(size)
        var end = cursor + size
        if value < 0 { cursor.pointee = UInt8(ascii: "-") }
        DecimalDigits.write(UInt64(value.magnitude), endingAt: &end)
        advance(by: size)
    }

    /// Writes a finite `value` exactly as Swift's `description` does (the shortest text that parses back
    /// to the same double); a non-finite one as `null`.
    mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            append("null")
            return
        }
        if value == 0 {
            append(value.sign == .minus ? "-0.0" : "0.0")
            return
        }
        if let (digits, scale) = Self.shortDecimal(value.magnitude) {
            writeDecimal(digits, scale: scale, negative: value < 0)
            return
        }
        // Long or very large or small numbers: Swift's own formatting (one String per number).
        var text = value.description
        text.withUTF8 { append($0) }
    }

    /// `magnitude` as `digits / 10^scale` with at most 15 significant digits, when that quotient
    /// rounds to exactly `magnitude` and Swift writes it without an exponent (1e-4 ≤ it < 1e15).
    ///
    /// Fifteen digits are fewer than a double tells apart, so no shorter (or other 15-digit) decimal
    /// can round to the same double: these digits are the shortest, the ones `description` picks.
    /// Both `digits` (< 2^53) and `10^scale` (scale ≤ 22) are exact doubles, so the division is
    /// correctly rounded, as parsing the text is.
    @inline(__always)
    private static func shortDecimal(_ magnitude: Double) -> (digits: UInt, scale: Int)? {
        guard magnitude >= 1e-4, magnitude < 1e15 else { return nil }
        var power = 1.0
        for scale in 0...19 {
            let scaled = magnitude * power
            guard scaled < 1e15 else { return nil }
            if scaled.rounded(.towardZero) == scaled, scaled / power == magnitude {
                var digits = UInt(scaled)
                var scale = scale
                while scale > 0, digits % 10 == 0 {
                    digits /= 10
                    scale -= 1
                }
                // Swift switches to an exponent below 1e-4 (`9.99e-05`), judged on these digits.
                guard JSON.integerSize(Int(digits)) - 1 - scale >= -4 else { return nil }
                return (digits, scale)
            }
            power *= 10
        }
        return nil
    }

    /// Writes `digits / 10^scale` as `123.45`, `0.005` or `120.0`.
    private mutating func writeDecimal(_ digits: UInt, scale: Int, negative: Bool) {
        let digitCount = JSON.integerSize(Int(digits))
        let sign = negative ? 1 : 0
        // `12.5` needs one byte for the point; `0.005` a leading `0.` and zeros; `120.0` a trailing `.0`.
        let integerDigits = digitCount - scale
        let size = sign + (integerDigits > 0 ? digitCount + (scale == 0 ? 2 : 1) : 2 + scale)
        reserve(size)
        let start = cursor
        if negative { start.pointee = UInt8(ascii: "-") }
        var end = start + size
        if scale == 0 {
            end -= 2
            end[0] = UInt8(ascii: ".")
            end[1] = UInt8(ascii: "0")
            DecimalDigits.write(UInt64(digits), endingAt: &end)
        } else if integerDigits > 0 {
            // The digits one place to the right of where they end up, then the integer part moved
            // back over the gap and the point put in.
            DecimalDigits.write(UInt64(digits), endingAt: &end)
            for index in 0..<integerDigits { end[index - 1] = end[index] }
            end[integerDigits - 1] = UInt8(ascii: ".")
        } else {
            DecimalDigits.write(UInt64(digits), endingAt: &end)
            var zero = start + sign
            zero.pointee = UInt8(ascii: "0")
            zero += 1
            zero.pointee = UInt8(ascii: ".")
            zero += 1
            while zero < end {
                zero.pointee = UInt8(ascii: "0")
                zero += 1
            }
        }
        advance(by: size)
    }
}
