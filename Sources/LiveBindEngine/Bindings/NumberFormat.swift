/// A printf-like pattern with one conversion, e.g. `"%.1f °C"`, `"%d items"`, `"%05.2f"`, `"%s"`.
///
/// Supports flags `-`, `+`, space and `0`, a width, a precision, and the conversions `d`/`i` (integer,
/// truncated toward zero), `f` (fixed, default precision 6), `x` (hexadecimal integer), `s` (any value as
/// text) and `%%`. Written here rather than with Foundation so the engine stays Foundation-free.
struct NumberFormat: Sendable {
    private let prefix: String
    private let suffix: String
    private let conversion: Character
    private let leftAlign: Bool, plus: Bool, space: Bool, zeroPad: Bool
    private let width: Int
    private let precision: Int?

    /// Parses the pattern; throws when it has no conversion, more than one, or an unsupported one.
    init(_ pattern: String) throws(BindingError) {
        func invalid(_ reason: String) -> BindingError {
            .invalidParameter(transform: "format", parameter: "pattern", reason: reason)
        }
        var prefix = "", suffix = ""
        var spec: (conversion: Character, flags: String, width: Int, precision: Int?)?
        var characters = pattern[...]
        while let character = characters.popFirst() {
            guard character == "%" else {
                if spec == nil { prefix.append(character) } else { suffix.append(character) }
                continue
            }
            if characters.first == "%" {
                characters.removeFirst()
                if spec == nil { prefix.append("%") } else { suffix.append("%") }
                continue
            }
            guard spec == nil else { throw invalid("has more than one conversion in '\(pattern)'") }
            var flags = ""
            while let flag = characters.first, "-+ 0".contains(flag) { flags.append(flag); characters.removeFirst() }
            let width = Self.number(&characters)
            var precision: Int?
            if characters.first == "." {
                characters.removeFirst()
                precision = Self.number(&characters)
            }
            guard let conversion = characters.popFirst(), "difxs".contains(conversion) else {
                throw invalid("supports %d, %i, %f, %x, %s and %% in '\(pattern)'")
            }
            guard width <= 64, (precision ?? 0) <= 17 else { throw invalid("width or precision too large in '\(pattern)'") }
            spec = (conversion, flags, width, precision)
        }
        guard let spec else { throw invalid("needs one conversion such as %.1f or %d in '\(pattern)'") }
        self.prefix = prefix
        self.suffix = suffix
        self.conversion = spec.conversion
        self.leftAlign = spec.flags.contains("-")
        self.plus = spec.flags.contains("+")
        self.space = spec.flags.contains(" ")
        self.zeroPad = spec.flags.contains("0") && !spec.flags.contains("-")
        self.width = spec.width
        self.precision = spec.precision
    }

    /// The ASCII digits at the start of `characters`, consumed, as a number that stops growing past
    /// `Self.largestField` (enough to refuse it: the bounds are far below, and a client's 30 digits
    /// must not overflow an `Int`).
    private static func number(_ characters: inout Substring) -> Int {
        var value = 0
        while let digit = characters.first?.asciiValue, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
            value = min(value * 10 + Int(digit - UInt8(ascii: "0")), largestField)
            characters.removeFirst()
        }
        return value
    }

    /// Past every width and precision bound; a longer field reads as this.
    private static let largestField = 1_000

    /// The pattern with `value` filled in.
    func format(_ value: JSON) throws(BindingError) -> String {
        var body: String
        var negative = false
        switch conversion {
        case "s":
            body = value.stringValue ?? value.description
            if let precision { body = String(body.prefix(precision)) }
            return prefix + pad(body, sign: "") + suffix
        default:
            guard let number = value.doubleValue, number.isFinite else {
                throw .transformFailed(transform: "format", reason: "%\(conversion) needs a number, found \(value.typeName)")
            }
            negative = number < 0 || (number == 0 && number.sign == .minus && conversion == "f")
            switch conversion {
            case "f": body = Self.fixed(number.magnitude, precision ?? 6)
            case "x":
                guard let integer = Int(exactly: number.rounded(.towardZero)) else { body = number.description; break }
                body = String(integer.magnitude, radix: 16)
            default:
                guard let integer = Int(exactly: number.rounded(.towardZero)) else { body = number.description; break }
                body = String(integer.magnitude)
                negative = integer < 0
                if let precision, body.count < precision { body = String(repeating: "0", count: precision - body.count) + body }
            }
        }
        let sign = negative ? "-" : plus ? "+" : space ? " " : ""
        return prefix + pad(body, sign: sign) + suffix
    }

    private func pad(_ body: String, sign: String) -> String {
        let length = sign.count + body.count
        guard length < width else { return sign + body }
        let fill = width - length
        if leftAlign { return sign + body + String(repeating: " ", count: fill) }
        if zeroPad && conversion != "s" { return sign + String(repeating: "0", count: fill) + body }
        return String(repeating: " ", count: fill) + sign + body
    }

    /// `magnitude` rounded to `digits` decimals (ties to even on the scaled binary value, like C's printf
    /// in practice), falling back to Swift's shortest form for numbers too large for 64-bit scaling.
    static func fixed(_ magnitude: Double, _ digits: Int) -> String {
        var scale: UInt64 = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (magnitude * Double(scale)).rounded(.toNearestOrEven)
        guard scaled < 9.0e18 else { return magnitude.description }
        let units = UInt64(scaled)
        let whole = String(units / scale)
        guard digits > 0 else { return whole }
        let fraction = String(units % scale)
        return whole + "." + String(repeating: "0", count: digits - fraction.count) + fraction
    }
}
