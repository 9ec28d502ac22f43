import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// RFC 7386 Appendix A examples, applied at a member so that non-object targets can be tested too.
@Suite("Merge patch") struct MergePatchTests {
    static let examples: [(target: String, patch: String, result: String)] = [
        (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
        (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
        (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
        (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
        (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
        (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
        (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
        (#"["a","b"]"#, #"["c","d"]"#, #"["c","d"]"#),
        (#"{"a":"b"}"#, #"["c"]"#, #"["c"]"#),
        (#"{"a":"foo"}"#, #"null"#, #"null"#),
        (#"{"a":"foo"}"#, #""bar""#, #""bar""#),
        (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
        (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
        (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#)
    ]

    @Test(arguments: examples)
    func appliesTheRFCExample(_ example: (target: String, patch: String, result: String)) throws {
        let store = Store()
        try store.put("m", ["t": try json(example.target)])
        try store.mergePatch(json(example.patch), at: Path(["t"]), in: "m")
        #expect(try store.value(of: "m", at: Path(["t"])) == json(example.result))
    }

    @Test func patchesTheRootAndCreatesAMissingMember() throws {
        let store = Store()
        try store.put("m", ["a": 1, "b": 2])
        try store.mergePatch(json(#"{"a":null,"c":{"d":null,"e":1}}"#), in: "m")
        #expect(try store.value(of: "m") == json(#"{"b":2,"c":{"e":1}}"#))
        try store.mergePatch(json(#"{"x":null}"#), at: Path(["new"]), in: "m")
        #expect(try store.value(of: "m", at: Path(["new"])) == [:])
        #expect(throws: StoreError.pathNotFound(Path(["nope"]))) {
            try store.mergePatch(["x": 1], at: Path(["nope", "deeper"]), in: "m")
        }
        #expect(throws: StoreError.typeMismatch(path: .root, expected: "object", found: "array")) {
            try store.mergePatch([1], in: "m")
        }
    }

    @Test func mergingOneKeyIsOneSetOfThatMember() throws {
        let store = Store()
        try store.put("sensor", json(#"{"temperature":20,"meta":{"unit":"C","site":"roof"},"gone":true}"#))
        let all = EngineRecorder<Commit>()
        let token = store.observeAll(all.handler)
        try store.mergePatch(json(#"{"temperature":21}"#), in: "sensor")
        try store.mergePatch(json(#"{"meta":{"site":"cellar","unit":"C"},"gone":null}"#), in: "sensor")
        let commits = all.events.compactMap { if case .changes(let c) = $0.kind { c } else { nil } }
        #expect(
            commits == [
                [Change(kind: .set, path: Path(["temperature"]), value: 21)],
                [Change(kind: .set, path: Path(["meta", "site"]), value: "cellar"), Change(kind: .remove, path: Path(["gone"]))]
            ])
        #expect(try !store.mergePatch(json(#"{"temperature":21}"#), in: "sensor").changed)
        token.cancel()
    }
}
