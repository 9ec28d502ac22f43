extension Array where Element == UInt8 {
    /// The two digits of every number below 100, in order: "00", "01", …, "99".
    private static let digitPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Appends `value` in decimal, two digits per division, without making a `String` first (a
    /// `String` of more than 15 bytes, such as an event id, is one allocation).
    mutating func appendDecimal(_ value: UInt64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of UInt64.max
        let count = Swift.withUnsafeMutableBytes(of: &digits) { buffer -> Int in
            let pairs = Self.digitPairs.utf8Start
            var rest = value
            var end = buffer.count
            while rest >= 100 {
                let pair = Int(rest % 100) * 2
                rest /= 100
                end -= 2
                buffer[end] = pairs[pair]
                buffer[end + 1] = pairs[pair + 1]
            }
            if rest >= 10 {
                let pair = Int(rest) * 2
                end -= 2
                buffer[end] = pairs[pair]
                buffer[end + 1] = pairs[pair + 1]
            } else {
                end -= 1
                buffer[end] = UInt8(ascii: "0") + UInt8(rest)
            }
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
