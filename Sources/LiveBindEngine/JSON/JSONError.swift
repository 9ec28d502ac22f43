/// Why a byte sequence is not acceptable JSON text. Every case carries the byte offset of the problem.
public enum JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text ended in the middle of a value (or was empty).
    case unexpectedEnd(offset: Int)
    /// A byte that cannot start or continue a value here.
    case unexpectedByte(UInt8, offset: Int)
    /// Bytes that are not well-formed UTF-8.
    case invalidUTF8(offset: Int)
    /// A raw control character (below U+0020) inside a string; it must be escaped.
    case controlCharacterInString(offset: Int)
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    case invalidEscape(offset: Int)
    /// A `\u` escape of a UTF-16 surrogate that is not part of a valid pair.
    case loneSurrogate(offset: Int)
    /// A number that does not follow the JSON grammar (leading zeros, `NaN`, `Infinity`, `1.`, ...).
    case invalidNumber(offset: Int)
    /// A number too large for a `Double` (such as `1e400`).
    case numberOutOfRange(offset: Int)
    /// Arrays and objects nested deeper than the allowed depth.
    case tooDeep(maxDepth: Int, offset: Int)
    /// Something other than whitespace after the value.
    case trailingGarbage(offset: Int)

    /// The byte offset in the input where the problem was found.
    public var offset: Int {
        switch self {
        case .unexpectedEnd(let o), .unexpectedByte(_, let o), .invalidUTF8(let o),
            .controlCharacterInString(let o), .invalidEscape(let o), .loneSurrogate(let o),
            .invalidNumber(let o), .numberOutOfRange(let o), .tooDeep(_, let o), .trailingGarbage(let o):
            o
        }
    }

    /// A message saying what is wrong and where.
    public var description: String {
        switch self {
        case .unexpectedEnd(let o): "JSON text ends unexpectedly at byte \(o)"
        case .unexpectedByte(let b, let o): "unexpected \(Self.show(b)) at byte \(o)"
        case .invalidUTF8(let o): "invalid UTF-8 at byte \(o)"
        case .controlCharacterInString(let o): "unescaped control character in a string at byte \(o); use \\n, \\t or \\u00XX"
        case .invalidEscape(let o): "invalid escape sequence at byte \(o); JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"
        case .loneSurrogate(let o): "unpaired UTF-16 surrogate in \\u escape at byte \(o)"
        case .invalidNumber(let o): "invalid number at byte \(o) (no leading zeros, NaN or Infinity; digits required after '.' and 'e')"
        case .numberOutOfRange(let o): "number at byte \(o) is too large for a double"
        case .tooDeep(let depth, let o): "nesting deeper than \(depth) levels at byte \(o)"
        case .trailingGarbage(let o): "unexpected data after the JSON value at byte \(o)"
        }
    }

    private static func show(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }
}
