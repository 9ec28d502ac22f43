import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Transforms") struct TransformTests {
    let registry = TransformRegistry()

    func forward(_ spec: TransformSpec, _ value: JSON) throws -> JSON { try registry.make(spec).applyForward(value) }
    func reverse(_ spec: TransformSpec, _ value: JSON) throws -> JSON { try registry.make(spec).applyReverse(value) }

    @Test(arguments: [
        ("%.1f °C", 20.55 as JSON, "20.6 °C"), ("%.1f °C", 20 as JSON, "20.0 °C"), ("%d items", 3 as JSON, "3 items"),
        ("%d", -2.9 as JSON, "-2"), ("%05.2f", 3.14159 as JSON, "03.14"), ("%+d", 5 as JSON, "+5"), ("%-4d|", 7 as JSON, "7   |"),
        ("%x", 255 as JSON, "ff"), ("%s!", "hi" as JSON, "hi!"), ("100%% %d", 9 as JSON, "100% 9"), ("%.0f", 0.5 as JSON, "0"),
        ("%f", 1.5 as JSON, "1.500000"), ("%.2f", -0.001 as JSON, "-0.00"), ("%4.1f", 1e20 as JSON, "1e+20")
    ])
    func formatPatterns(pattern: String, value: JSON, expected: String) throws {
        #expect(try forward(TransformSpec("format", ["pattern": .string(pattern)]), value) == .string(expected))
    }

    @Test func formatRejectsBadPatternsAndNonNumbers() throws {
        #expect(throws: BindingError.self) { try registry.make(TransformSpec("format", ["pattern": "no conversion"])) }
        #expect(throws: BindingError.self) { try registry.make(TransformSpec("format", ["pattern": "%d and %d"])) }
        #expect(throws: BindingError.self) { try registry.make(TransformSpec("format", ["pattern": "%q"])) }
        #expect(throws: BindingError.self) { try forward(TransformSpec("format", ["pattern": "%d"]), "x") }
        #expect(throws: BindingError.self) { try registry.make(TransformSpec("format", ["pattern": "%d", "extra": 1])) }
        // Issue 26: a width of 20 digits overflowed `Int` and trapped, ending the server.
        for pattern in ["%99999999999999999999d", "%.99999999999999999999f", "%065d", "%1.18f", "%٣d"] {
            #expect(throws: BindingError.self, "\(pattern)") { try registry.make(TransformSpec("format", ["pattern": .string(pattern)])) }
        }
        #expect(try forward(TransformSpec("format", ["pattern": "%064d"]), 1) == .string(String(repeating: "0", count: 63) + "1"))
    }

    @Test func scaleIsReversibleAndKeepsIntegers() throws {
        let spec = TransformSpec("scale", ["factor": 2, "offset": 1])
        #expect(try forward(spec, 3) == .int(7))
        #expect(try reverse(spec, 7) == .int(3))
        #expect(try forward(spec, 0.25) == .double(1.5))
        #expect(throws: BindingError.self) { try registry.make(TransformSpec("scale", ["factor": 0])) }
    }

    @Test func notThresholdAndLookup() throws {
        #expect(try forward(TransformSpec("not"), true) == false)
        #expect(try reverse(TransformSpec("not"), true) == false)
        #expect(try forward(TransformSpec("threshold", ["value": 10]), 11) == true)
        #expect(try forward(TransformSpec("threshold", ["value": 10]), 9.5) == false)
        let labels = TransformSpec("threshold", ["value": 10, "above": "high", "below": "low", "inclusive": false])
        #expect(try forward(labels, 10) == "low")
        #expect(!(try registry.make(labels).isReversible))
        let table = TransformSpec("lookup", ["table": ["1": "one", "2": "two"], "default": "many"])
        #expect(try forward(table, 1) == "one")
        #expect(try forward(table, "2") == "two")
        #expect(try forward(table, 3) == "many")
        #expect(try reverse(table, "two") == "2")
        let pairs = TransformSpec("lookup", ["pairs": [[1, "one"], [2, "two"]]])
        #expect(try reverse(pairs, "two") == 2)
        let notInjective = TransformSpec("lookup", ["table": ["a": 1, "b": 1]])
        #expect(!(try registry.make(notInjective).isReversible))
        // Found by FuzzBindingSpec: a repeated key kept its last value forward but both backward, so
        // a two-way binding turned a write of "a" into "b".
        let repeatedKey = TransformSpec("lookup", ["pairs": [[1, "a"], [1, "b"]]])
        #expect(!(try registry.make(repeatedKey).isReversible))
        #expect(try forward(repeatedKey, 1) == "b")
        // A parameter of the wrong type is named as such, not ignored nor blamed on another one.
        #expect(
            throws: BindingError.invalidParameter(
                transform: "threshold", parameter: "inclusive",
                reason: "must be true or false, found \"no\"")
        ) {
            try registry.make(TransformSpec("threshold", ["value": 10, "inclusive": "no"]))
        }
        #expect(
            throws: BindingError.invalidParameter(
                transform: "lookup", parameter: "pairs",
                reason: "must be an array of [from, to] pairs, found {\"a\":1}")
        ) {
            try registry.make(TransformSpec("lookup", ["pairs": ["a": 1]]))
        }
    }

    @Test func aggregatesOfAWholeArray() throws {
        let values: JSON = [3, 1.5, "x", 4]
        #expect(try forward(TransformSpec("count"), values) == 4)
        #expect(try forward(TransformSpec("sum"), values) == 8.5)
        #expect(try forward(TransformSpec("avg"), values) == .double(8.5 / 3))
        #expect(try forward(TransformSpec("min"), values) == 1.5)
        #expect(try forward(TransformSpec("max"), values) == 4)
        #expect(try forward(TransformSpec("avg"), []) == .null)
        #expect(throws: BindingError.self) { try forward(TransformSpec("sum"), 3) }
    }

    @Test func userTransformsAreRegisteredInSwift() throws {
        let (store, bindings) = try makeBound(["a": #"{"name": "probe"}"#, "b": "{}"])
        bindings.transforms.register(
            Transform(
                name: "upper",
                forward: { value in
                    guard case .string(let text) = value else {
                        throw BindingError.transformFailed(transform: "upper", reason: "not a string")
                    }
                    return .string(text.uppercased())
                }, reverse: { value in .string(value.stringValue?.lowercased() ?? "") }))
        bindings.transforms.register("repeat") { parameters throws(BindingError) in
            let times = Int(try parameters.number("times", default: 2))
            return Transform(name: "repeat") { .string(String(repeating: $0.stringValue ?? "", count: times)) }
        }
        try bindings.bind(BindingSpec("a.name", "b.name", mode: .twoWay, transform: TransformSpec("upper")))
        try bindings.bind(BindingSpec("a.name", "b.echo", transform: TransformSpec("repeat", ["times": 3])))
        #expect(store.at("b.name") == "PROBE" && store.at("b.echo") == "probeprobeprobe")
        try store.set("HELLO", at: "b.name")
        #expect(store.at("a.name") == "hello")
        #expect(bindings.transforms.names.contains("upper"))
        #expect(throws: BindingError.unknownTransform("nope")) { try bindings.transforms.make(TransformSpec("nope")) }
    }
}
