import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The fast paths of the encoder, held to the text the simple implementation wrote.
@Suite("JSON writer") struct JSONWriterTests {
    private func bytes(_ value: JSON) -> [UInt8] { value.encoded() }

    /// The expected bytes of a string: quote, escaped UTF-8, quote.
    private func expectedBytes(_ value: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x08: out += Array("\\b".utf8)
            case 0x0C: out += Array("\\f".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    /// Rows of an array (eight or more) copy the text of keys written at the same place before; keys
    /// that change, need escapes, are long, or sit past the sixteenth place are written afresh.
    @Test func rowsThatRepeatChangeOrOutgrowTheirKeys() throws {
        let long = String(repeating: "k", count: 40)
        let keySets: [[String]] = [
            ["id", "name", "ok"], ["id", "name", "ok"], ["id", "nam", "ok"], ["id", "name"],
            ["a\"b", "ok", "id"], ["a\"b", "ok", "id"], [long, "id"], [long, "id"],
            (0..<20).map { "k\($0)" }, (0..<20).map { "k\($0)" }, ["é", "ключ"], ["é", "ключ"], []
        ]
        let rows: [JSON] = keySets.enumerated().map { row, keys in
            .object(.init(uniqueKeysWithValues: keys.enumerated().map { ($1, JSON.int(row * 100 + $0)) }))
        }
        // Each row alone (an array of one) is written without remembering keys.
        let expected = "[" + rows.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: ",") + "]"
        #expect(String(decoding: bytes(.array(Deque(rows))), as: UTF8.self) == expected)
        #expect(try JSON(parsing: bytes(.array(Deque(rows)))) == .array(Deque(rows)))
    }

    @Test func everyControlCharacterIsEscaped() {
        for byte in UInt8(0)..<0x20 {
            let text = String(decoding: [byte], as: UTF8.self)
            #expect(bytes(.string(text)) == expectedBytes(text), "byte \(byte)")
        }
        #expect(JSON.string("\u{7f}").description == "\"\u{7f}\"")
    }

    @Test func escapesAtEveryPositionOfAWord() {
        // An escape at each offset of the eight-byte scan, in strings long and short, so that the word
        // loop, the byte loop after it and the copied runs on both sides are all exercised.
        for length in [1, 7, 8, 9, 15, 16, 17, 31, 64] {
            for position in 0..<length {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1f}"] {
                    var characters = Array(repeating: "a", count: length)
                    characters[position] = special
                    let text = characters.joined()
                    #expect(bytes(.string(text)) == expectedBytes(text), "\(length) at \(position)")
                }
            }
        }
    }

    @Test func nonASCIIIsCopiedAsUTF8() {
        for text in ["é", "日本語のテキスト", "emoji 👩‍👩‍👧 and \u{10FFFF}", String(repeating: "ü\"x", count: 100), "\u{80}\u{7ff}\u{800}"] {
            #expect(bytes(.string(text)) == expectedBytes(text))
        }
    }

    @Test func longStringsGrowTheBuffer() {
        let long = String(repeating: "0123456789abcdef", count: 70_000) + "\n" + String(repeating: "é", count: 1_000)
        #expect(bytes(.string(long)) == expectedBytes(long))
        let escapes = String(repeating: "\u{1}", count: 50_000)
        #expect(bytes(.string(escapes)) == expectedBytes(escapes))
        #expect(bytes(.string("")) == Array("\"\"".utf8))
    }

    @Test func largeContainersGrowTheBuffer() {
        let array = JSON.array(.init((0..<50_000).map { JSON.int($0 * 7919) }))
        let text = "[" + (0..<50_000).map { String($0 * 7919) }.joined(separator: ",") + "]"
        #expect(array.description == text)
    }

    @Test func integersAtEveryLength() {
        var values = [0, 1, -1, 9, 10, 99, 100, -100, Int.max, Int.min, Int.min + 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            values += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for value in values {
            #expect(JSON.int(value).description == String(value))
        }
    }

    @Test func doublesMatchSwiftsDescription() {
        var values: [Double] = [
            0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 0.1, 0.2, 0.3, 0.1 + 0.2, 1.5, 100.0, 1e-4, 0.00012, 9.99e-5,
            1e-5, 0.001, 123.456, 1e14, 1e15, 999_999_999_999_999.0, 123_456_789_012_345.6, 1e16, 9007199254740992.0,
            1e21, 1e22, 1e23, 1e300, .leastNonzeroMagnitude, .pi, .ulpOfOne, .greatestFiniteMagnitude, .leastNormalMagnitude,
            25_000.5, 0.007, 0.0005, 12.0, 12.25, -3.125e-3, 4.35, 2.675, 1.005
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // Short decimals of every size the fast path takes, and random bit patterns.
            let digits = Double(Int.random(in: 0...999_999_999, using: &generator))
            let scale = Double.random(in: 0...1, using: &generator) < 0.5 ? 1.0 : 1e6
            values.append(digits / [1, 10, 100, 1e3, 1e4, 1e5, 1e7, 1e9][Int.random(in: 0..<8, using: &generator)] * scale)
            values.append(-Double(Int.random(in: 0...100_000, using: &generator)) * 0.5)
            let bits = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            if bits.isFinite { values.append(bits) }
        }
        for value in values {
            #expect(JSON.double(value).description == value.description, "\(value)")
        }
    }
}
