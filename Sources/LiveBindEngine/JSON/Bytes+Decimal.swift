/// Decimal digits written two at a time from a table, without making a `String` first (a `String` of
/// more than 15 bytes, such as an event id, is one allocation): for the JSON writer and byte arrays.
enum DecimalDigits {
    /// The two digits of every number below 100, in order: "00", "01", …, "99".
    private static let pairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

    /// Writes the decimal digits of `magnitude` so that the last one is just before `end`, two at a
    /// time, and moves `end` back to the first.
    @inline(__always)
    static func write(_ magnitude: UInt64, endingAt end: inout UnsafeMutablePointer<UInt8>) {
        let pairs = Self.pairs.utf8Start
        var rest = magnitude
        while rest >= 100 {
            let pair = Int(rest % 100) * 2
            rest /= 100
            end -= 2
            end[0] = pairs[pair]
            end[1] = pairs[pair + 1]
        }
        if rest >= 10 {
            let pair = Int(rest) * 2
            end -= 2
            end[0] = pairs[pair]
            end[1] = pairs[pair + 1]
        } else {
            end -= 1
            end[0] = UInt8(ascii: "0") + UInt8(rest)
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` in decimal.
    package mutating func appendDecimal(_ value: UInt64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in  // the 20 digits of UInt64.max
            let last = buffer.baseAddress! + buffer.count
            var first = last
            DecimalDigits.write(value, endingAt: &first)
            append(contentsOf: UnsafeBufferPointer(start: first, count: last - first))
        }
    }

    /// Appends `value` in decimal, with a `-` when negative.
    package mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(UInt64(value.magnitude))
    }
}
