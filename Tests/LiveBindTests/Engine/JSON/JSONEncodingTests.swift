import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("JSON encoding") struct JSONEncodingTests {
    @Test func encodesCompactlyInKeyOrder() {
        let value: JSON = ["b": [1, true, nil], "a": ["x": "y"], "n": -12]
        #expect(value.description == #"{"b":[1,true,null],"a":{"x":"y"},"n":-12}"#)
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        let value: JSON = .string("q\"b\\n\n\r\t\u{8}\u{c}\u{1}\u{1f}é/")
        #expect(value.description == #""q\"b\\n\n\r\t\b\f\u0001\u001fé/""#)
    }

    @Test func integersStayIntegersAndDoublesRoundTrip() throws {
        #expect(JSON.int(Int.min).description == "-9223372036854775808")
        #expect(JSON.int(0).description == "0")
        for double in [0.1, 1.0, -2.5e-7, 1e300, Double.leastNonzeroMagnitude, Double.pi, 123456789.125, -0.0] {
            let text = JSON.double(double).description
            guard case .double(let parsed) = try JSON(parsing: text) else {
                Issue.record("\(text) did not parse back as a double")
                continue
            }
            #expect(parsed.bitPattern == double.bitPattern, "\(text)")
        }
    }

    @Test func nonFiniteDoublesBecomeNull() {
        #expect(JSON.double(.nan).description == "null")
        #expect(JSON.double(.infinity).description == "null")
    }

    @Test func encodeIntoAppends() {
        var buffer = Array("data: ".utf8)
        let value: JSON = ["a": 1]
        value.encode(into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"data: {"a":1}"#)
    }

    @Test func parseEncodeRoundTrip() throws {
        let text = #"{"name":"probe","readings":[{"id":1,"v":20.5},{"id":2,"v":-3}],"ok":false,"s":"\u0000"}"#
        let value = try JSON(parsing: text)
        #expect(value.description == text)
        #expect(try JSON(parsing: value.encoded()) == value)
    }

    @Test func equalityIgnoresKeyOrderAndNumberRepresentation() {
        let a: JSON = ["x": 1, "y": 2]
        let b: JSON = ["y": 2, "x": 1.0]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(JSON.int(1) != .double(1.5))
        #expect(JSON.array([1, 2]) != .array([2, 1]))
    }
}
