import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The fast paths of the parser: word-wise string scanning, interned keys, duplicate keys found by
/// fingerprint, numbers read while they are checked, and containers closed off explicit stacks.
@Suite("JSON parser fast paths") struct JSONParserTests {
    @Test func stringsOfEveryLengthWithAnEscapeAnywhere() throws {
        for length in [0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 33] {
            let plain = String(repeating: "k", count: length)
            #expect(try JSON(parsing: "\"\(plain)\"") == .string(plain))
            for position in 0...length {
                var characters = Array(repeating: "a", count: length)
                characters.insert("\\n", at: position)
                #expect(try JSON(parsing: "\"\(characters.joined())\"").stringValue?.utf8.count == length + 1)
            }
        }
    }

    @Test func errorsInsideAWordKeepTheirOffsets() {
        for position in 0..<20 {
            let prefix = String(repeating: "x", count: position)
            #expect(throws: JSONError.controlCharacterInString(offset: position + 1)) {
                try JSON(parsing: "\"\(prefix)\u{1}abcdefghijklmnop\"")
            }
            #expect(throws: JSONError.invalidUTF8(offset: 0)) {
                try JSON(parsing: Array("\"\(prefix)".utf8) + [0xFF] + Array("abcdefghij\"".utf8))
            }
            #expect(throws: JSONError.unexpectedEnd(offset: position + 1)) {
                try JSON(parsing: "\"\(prefix)")
            }
        }
    }

    @Test func nonASCIIStringsAndKeys() throws {
        let text = #"{"é":"日本","ключ":"ü€😀","a":"\u00e9"}"#
        #expect(try JSON(parsing: text) == ["é": "日本", "ключ": "ü€😀", "a": "é"])
    }

    @Test func repeatedKeysAcrossObjectsAreTheSameKeys() throws {
        let rows = (0..<200).map { #"{"id":\#($0),"a-much-longer-key-than-16":\#($0),"k":"v\#($0)"}"# }
        let parsed = try JSON(parsing: "[\(rows.joined(separator: ","))]")
        guard case .array(let elements) = parsed else { Issue.record("not an array"); return }
        for (index, row) in elements.enumerated() {
            #expect(row == ["id": .int(index), "a-much-longer-key-than-16": .int(index), "k": .string("v\(index)")])
            #expect(Array(row.objectValue?.keys ?? []) == ["id", "a-much-longer-key-than-16", "k"])
        }
    }

    /// Each object after the first two of the same keys is read against their shape; these follow it,
    /// stop short of it, go past it, leave it at every key, spell a key with an escape, and repeat a key.
    @Test func objectsThatFollowLeaveOrOutgrowTheShapeOfTheOnesBefore() throws {
        let shaped = #"{"id":1,"name":"n","ok":true}"#
        let variants: [(String, JSON)] = [
            (#"{"id":2,"name":"m","ok":false}"#, ["id": 2, "name": "m", "ok": false]),
            (#"{"id":3,"name":"m"}"#, ["id": 3, "name": "m"]),
            (#"{"id":4}"#, ["id": 4]),
            (#"{"id":5,"name":"m","ok":true,"extra":[]}"#, ["id": 5, "name": "m", "ok": true, "extra": []]),
            (#"{"name":"m","id":6,"ok":true}"#, ["name": "m", "id": 6, "ok": true]),
            (#"{"id":7,"nam":"m","ok":true}"#, ["id": 7, "nam": "m", "ok": true]),
            (#"{"id":8,"namex":"m","ok":true}"#, ["id": 8, "namex": "m", "ok": true]),
            (#"{"id":9,"n\u0061me":"m","ok":true}"#, ["id": 9, "name": "m", "ok": true]),
            (#"{"id":10,"name":"m","id":11}"#, ["id": 11, "name": "m"]),
            (#"{"id":12,"id":13,"ok":true}"#, ["id": 13, "ok": true]),
            (#"{"id":14 , "name" : "m" ,"ok":true}"#, ["id": 14, "name": "m", "ok": true])
        ]
        for (text, expected) in variants {
            for tail in [shaped, text] {
                let parsed = try JSON(parsing: "[\(shaped),\(shaped),\(text),\(tail)]")
                #expect(parsed.arrayValue?[2] == expected, "\(text)")
                #expect(parsed.arrayValue?[2].description == expected.description, "\(text)")
                #expect(parsed.arrayValue?[3] == (tail == shaped ? try JSON(parsing: shaped) : expected))
            }
        }
        // Nested objects keep a shape per depth, and a key cut off by the end of the text is an error.
        let nested = try JSON(parsing: #"[{"a":{"x":1},"b":2},{"a":{"x":3},"b":4},{"a":{"y":5},"b":6}]"#)
        #expect(nested.description == #"[{"a":{"x":1},"b":2},{"a":{"x":3},"b":4},{"a":{"y":5},"b":6}]"#)
        #expect(throws: JSONError.self) { try JSON(parsing: #"[{"id":1},{"id":2},{"id"#) }
        #expect(throws: JSONError.self) { try JSON(parsing: #"[{"id":1},{"id":2},{"i"#) }
    }

    /// Shapes are kept per depth: objects nested as deep as allowed, one after the other, each deeper.
    @Test func deeplyNestedObjectsOneAfterTheOther() throws {
        for depth in [1, 2, 3, 17, 64, 500] {
            let open = String(repeating: #"{"a":"#, count: depth)
            let close = String(repeating: "}", count: depth)
            let one = "\(open)1\(close)"
            let text = "[\(one),\(one),\(one),{\"b\":\(one)}]"
            let parsed = try JSON(parsing: text, maxDepth: depth + 2)
            #expect(parsed.description == text)
        }
        var growing: [String] = []
        for depth in 1...60 {
            growing.append(String(repeating: #"{"a":"#, count: depth) + "0" + String(repeating: "}", count: depth))
            let text = "[" + growing.joined(separator: ",") + "]"
            #expect(try JSON(parsing: text).description == text)
        }
    }

    @Test func duplicateKeysLastWinsAtTheFirstPlace() throws {
        let small = try JSON(parsing: #"{"a":1,"b":2,"a":3}"#)
        #expect(small.description == #"{"a":3,"b":2}"#)
        // Escaped and plain spellings of one key, and canonically equivalent Unicode spellings.
        #expect(try JSON(parsing: #"{"a":1,"\u0061":2}"#).description == #"{"a":2}"#)
        #expect(try JSON(parsing: "{\"\u{e9}\":1,\"e\u{301}\":2}").objectValue?.count == 1)
        #expect(try JSON(parsing: "{\"K\":1,\"\u{212A}\":2}").objectValue?.count == 1)
        let many = (0..<40).map { "\"k\($0 % 30)\":\($0)" }.joined(separator: ",")
        let large = try JSON(parsing: "{\(many)}")
        #expect(large.objectValue?.count == 30)
        #expect(large["k5"] == .int(35))
        #expect(large.objectValue?.keys.first == "k0")
    }

    @Test func numbersMatchDoubleParsing() throws {
        let texts = [
            "0", "-0", "0.0", "-0.0", "1", "-1", "123456789012345678", "-123456789012345678",
            "1234567890123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "0.1", "0.5", "1.5e3", "1E3", "1e+3", "1e-3", "2.5E-3", "123.456", "9007199254740993.0",
            "9007199254740992.5", "0.30000000000000004", "1e22", "1e23", "1e-22", "1e-23", "4.9e-324",
            "1.7976931348623157e308", "1e-400", "0e99999999999", "1234567890123456789.5", "12345678901234567890e-5",
            "1.00000000000000011102230246251565404236316680908203125", "0.000001", "5e-1", "100e-2"
        ]
        for text in texts {
            let parsed = try JSON(parsing: text)
            let isInteger = !text.contains(where: { ".eE".contains($0) })
            if isInteger, let integer = Int(text) {
                #expect(parsed == .int(integer), "\(text)")
                continue
            }
            guard case .double(let value) = parsed, let expected = Double(text) else {
                Issue.record("\(text) parsed as \(parsed)")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(text)")
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let value = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator))
            guard value.isFinite else { continue }
            for text in [
                value.description,
                String(Int.random(in: -999_999...999_999, using: &generator)) + "." + String(Int.random(in: 0...99_999, using: &generator))
            ] {
                guard case .double(let parsed) = try JSON(parsing: text) else { continue }
                #expect(parsed.bitPattern == Double(text)!.bitPattern, "\(text)")
            }
        }
        #expect(throws: JSONError.numberOutOfRange(offset: 0)) { try JSON(parsing: "1e99999999999999999999") }
    }

    @Test func deepButAllowedNestingAndEmptyContainers() throws {
        let depth = 512
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(try JSON(parsing: arrays).description == arrays)
        let objects = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        #expect(try JSON(parsing: objects).description == objects)
        #expect(throws: JSONError.tooDeep(maxDepth: depth, offset: depth)) {
            try JSON(parsing: "[" + arrays + "]")
        }
        #expect(try JSON(parsing: #" [ [ ] , { } , [ { "a" : [ ] } ] ] "#).description == #"[[],{},[{"a":[]}]]"#)
    }

    /// The stacks start no larger than the text can fill (one entry for a one-byte text) and grow from there.
    @Test func shortTextsAndTheFewestBytesPerValue() throws {
        for text in ["1", "[]", "{}", "[1]", "[[]]", "[1,2,3]", "[[1],[2]]", #"{"a":1}"#, #"{"a":{"b":[]}}"#] {
            #expect(try JSON(parsing: text).description == text)
        }
        #expect(try JSON(parsing: " 1 ") == .int(1))
        for count in [1, 2, 3, 8, 65, 200] {
            let flat = "[" + Array(repeating: "0", count: count).joined(separator: ",") + "]"
            #expect(try JSON(parsing: flat).arrayValue?.count == count)
            let nested = String(repeating: "[", count: count) + String(repeating: "]", count: count)
            #expect(try JSON(parsing: nested).description == nested)
            let keys = "{" + (0..<count).map { #""\#($0)":{}"# }.joined(separator: ",") + "}"
            #expect(try JSON(parsing: keys).objectValue?.count == count)
        }
    }

    @Test func structuralErrorsKeepTheirOffsets() {
        #expect(throws: JSONError.unexpectedByte(UInt8(ascii: "]"), offset: 3)) { try JSON(parsing: "[1,]") }
        #expect(throws: JSONError.unexpectedByte(UInt8(ascii: "}"), offset: 7)) { try JSON(parsing: #"{"a":1,}"#) }
        #expect(throws: JSONError.unexpectedByte(UInt8(ascii: "1"), offset: 5)) { try JSON(parsing: #"{"a" 1}"#) }
        #expect(throws: JSONError.unexpectedByte(UInt8(ascii: "}"), offset: 2)) { try JSON(parsing: "[1}") }
        #expect(throws: JSONError.unexpectedByte(UInt8(ascii: "1"), offset: 1)) { try JSON(parsing: "{1:2}") }
        #expect(throws: JSONError.unexpectedEnd(offset: 6)) { try JSON(parsing: #"{"a":1"#) }
        #expect(throws: JSONError.unexpectedEnd(offset: 3)) { try JSON(parsing: "[[1") }
        #expect(throws: JSONError.unexpectedEnd(offset: 0)) { try JSON(parsing: "") }
        #expect(throws: JSONError.trailingGarbage(offset: 3)) { try JSON(parsing: "[] []") }
    }
}
