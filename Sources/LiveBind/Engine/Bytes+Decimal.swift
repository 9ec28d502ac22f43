extension Array where Element == UInt8 {
    /// Appends `value` in decimal, without making a `String` first (a `String` of more than 15 bytes,
    /// such as an event id, is one allocation).
    mutating func appendDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of UInt64.max
        let count = Swift.withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            var rest = value
            var end = buffer.count
            repeat {
                end -= 1
                buffer[end] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            return buffer.count - end
        }
        Swift.withUnsafeBytes(of: &digits) { buffer in append(contentsOf: buffer[(buffer.count - count)...]) }
    }

    /// Appends `value` in decimal, with a `-` when negative.
    mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(UInt64(value.magnitude))
    }
}
