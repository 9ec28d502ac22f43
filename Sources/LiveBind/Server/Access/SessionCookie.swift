import LiveBindEngine
/// The session cookie on the wire: finding it in `Cookie` header fields, and the `Set-Cookie` values
/// that set and clear it.
enum SessionCookie {
    /// The cookie's name.
    static let name = "livebind_session"

    /// The value of the first well-formed `livebind_session` cookie in `Cookie` field values (RFC 6265
    /// section 5.4: `name=value` pairs separated by `;`), if any. A value that cannot be a session id
    /// (not 64 lowercase hex digits) is skipped, so that no lookup is made for it.
    static func value(in fields: [String]) -> String? {
        for field in fields {
            for pair in field.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = trimmed(pair[pair.startIndex..<equals])
                guard key.elementsEqual(name.utf8) else { continue }
                var value = trimmed(pair[pair.index(after: equals)...])
                if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
                    value = value.dropFirst().dropLast()
                }
                if SessionID.isWellFormed(value) { return String(decoding: value, as: UTF8.self) }
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that sets the session for `seconds`.
    static func setting(_ id: String, seconds: Int, secure: Bool) -> String {
        "\(name)=\(id); Path=/; Max-Age=\(max(0, seconds)); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that makes a browser drop the session cookie.
    static func clearing(secure: Bool) -> String {
        "\(name)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    private static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }
}

/// Session ids: 32 random bytes (256 bits) from the system's secure generator, as 64 hex digits.
enum SessionID {
    /// Digits in an id.
    static let length = 64

    /// A new id.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(length)
        for _ in 0..<(length / 16) {
            let word = generator.next() as UInt64
            for shift in stride(from: 60, through: 0, by: -4) { text.append(digits[Int((word >> UInt64(shift)) & 0xF)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `bytes` has the shape of an id.
    static func isWellFormed<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        bytes.count == length && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
