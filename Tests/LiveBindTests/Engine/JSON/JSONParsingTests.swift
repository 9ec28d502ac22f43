import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("JSON parsing") struct JSONParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSON(parsing: #" {"a": [1, -2.5, true, false, null, "x"], "b": {"c": 1e3}} "#)
        #expect(value == ["a": [1, -2.5, true, false, nil, "x"], "b": ["c": 1000.0]])
    }

    @Test func integersThatFitAreInts() throws {
        #expect(try JSON(parsing: "42") == .int(42))
        if case .int(let value) = try JSON(parsing: "-9223372036854775808") {
            #expect(value == Int.min)
        } else {
            Issue.record("Int.min did not parse as .int")
        }
        guard case .double = try JSON(parsing: "9223372036854775808") else {
            Issue.record("an integer past Int.max must be a double")
            return
        }
        guard case .double(let d) = try JSON(parsing: "1.0") else {
            Issue.record("1.0 must be a double")
            return
        }
        #expect(d == 1)
    }

    @Test func keepsKeyOrderAndLastDuplicateWins() throws {
        let value = try JSON(parsing: #"{"z": 1, "a": 2, "z": 3}"#)
        #expect(value.objectValue.map { Array($0.keys) } == ["z", "a"])
        #expect(value["z"] == 3)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try JSON(parsing: #""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\u{8}\u{c}\n\r\té😀"))
        #expect(try JSON(parsing: "\"héllo wörld\"") == "héllo wörld")
    }

    @Test(arguments: [
        "", " ", "[1,]", "{\"a\":1,}", "{a:1}", "[1 2]", "tru", "nul", "'x'", "[", "{\"a\"}", "\"abc"
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONError.self) { try JSON(parsing: text) }
    }

    @Test(arguments: ["01", "-01", "1.", ".5", "1e", "1e+", "+1", "-", "NaN", "Infinity", "-Infinity", "0x10"])
    func rejectsInvalidNumbers(_ text: String) {
        #expect(throws: JSONError.self) { try JSON(parsing: text) }
    }

    @Test func rejectsNumbersThatOverflowADouble() {
        #expect(throws: JSONError.numberOutOfRange(offset: 0)) { try JSON(parsing: "1e400") }
        #expect(throws: JSONError.numberOutOfRange(offset: 1)) { try JSON(parsing: "[-1e400]") }
    }

    @Test func rejectsLoneSurrogates() {
        #expect(throws: JSONError.loneSurrogate(offset: 1)) { try JSON(parsing: #""\ud800""#) }
        #expect(throws: JSONError.loneSurrogate(offset: 1)) { try JSON(parsing: #""\udc00x""#) }
        #expect(throws: JSONError.loneSurrogate(offset: 1)) { try JSON(parsing: #""\ud800\u0041""#) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONError.invalidUTF8(offset: 0)) { try JSON(parsing: [0x22, 0xFF, 0x22]) }
        #expect(throws: JSONError.invalidUTF8(offset: 0)) { try JSON(parsing: [0x22, 0xC0, 0xAF, 0x22]) }
        // An encoded surrogate (U+D800) is not valid UTF-8 either.
        #expect(throws: JSONError.invalidUTF8(offset: 0)) { try JSON(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func rejectsControlCharactersAndBadEscapes() {
        #expect(throws: JSONError.controlCharacterInString(offset: 2)) { try JSON(parsing: "\"a\nb\"") }
        #expect(throws: JSONError.invalidEscape(offset: 1)) { try JSON(parsing: #""\x""#) }
        #expect(throws: JSONError.invalidEscape(offset: 1)) { try JSON(parsing: #""\u12G4""#) }
    }

    @Test func rejectsTrailingGarbage() {
        #expect(throws: JSONError.trailingGarbage(offset: 3)) { try JSON(parsing: "{} x") }
        #expect(throws: JSONError.trailingGarbage(offset: 2)) { try JSON(parsing: "1 2") }
    }

    @Test func limitsNestingDepth() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONError.tooDeep(maxDepth: 512, offset: 512)) { try JSON(parsing: deep) }
        let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        _ = try JSON(parsing: ok, maxDepth: 10)
        #expect(throws: JSONError.self) { try JSON(parsing: ok, maxDepth: 9) }
    }

    @Test func parsesNonContiguousCollections() throws {
        let bytes = "[1,2]".utf8.reversed().reversed()
        #expect(try JSON(parsing: bytes) == [1, 2])
    }

    @Test func errorMessagesSayWhere() {
        #expect(JSONError.trailingGarbage(offset: 3).description.contains("byte 3"))
        #expect(JSONError.unexpectedByte(UInt8(ascii: "x"), offset: 0).description.contains("'x'"))
    }
}
