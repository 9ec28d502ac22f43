import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// RFC 6902 Appendix A examples, plus failure and atomicity cases.
@Suite("JSON Patch") struct JSONPatchTests {
    /// Applies `patch` to a model holding `document` and returns the result (or throws).
    func apply(_ document: String, _ patch: String) throws -> JSON {
        let store = Store()
        try store.put("m", json(document))
        try store.jsonPatch(json(patch), in: "m")
        return try store.value(of: "m")
    }

    struct Example: Sendable, CustomStringConvertible {
        let name: String, document: String, patch: String, result: String
        var description: String { name }
    }

    static let examples: [Example] = [
        Example(
            name: "A.1 add an object member", document: #"{"foo":"bar"}"#,
            patch: #"[{"op":"add","path":"/baz","value":"qux"}]"#, result: #"{"baz":"qux","foo":"bar"}"#),
        Example(
            name: "A.2 add an array element", document: #"{"foo":["bar","baz"]}"#,
            patch: #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, result: #"{"foo":["bar","qux","baz"]}"#),
        Example(
            name: "A.3 remove an object member", document: #"{"baz":"qux","foo":"bar"}"#,
            patch: #"[{"op":"remove","path":"/baz"}]"#, result: #"{"foo":"bar"}"#),
        Example(
            name: "A.4 remove an array element", document: #"{"foo":["bar","qux","baz"]}"#,
            patch: #"[{"op":"remove","path":"/foo/1"}]"#, result: #"{"foo":["bar","baz"]}"#),
        Example(
            name: "A.5 replace a value", document: #"{"baz":"qux","foo":"bar"}"#,
            patch: #"[{"op":"replace","path":"/baz","value":"boo"}]"#, result: #"{"baz":"boo","foo":"bar"}"#),
        Example(
            name: "A.6 move a value", document: #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
            patch: #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
            result: #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#),
        Example(
            name: "A.7 move an array element", document: #"{"foo":["all","grass","cows","eat"]}"#,
            patch: #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
            result: #"{"foo":["all","cows","eat","grass"]}"#),
        Example(
            name: "A.8 test a value: success", document: #"{"baz":"qux","foo":["a",2,"c"]}"#,
            patch: #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
            result: #"{"baz":"qux","foo":["a",2,"c"]}"#),
        Example(
            name: "A.10 add a nested member object", document: #"{"foo":"bar"}"#,
            patch: #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#,
            result: #"{"foo":"bar","child":{"grandchild":{}}}"#),
        Example(
            name: "A.11 ignore unrecognized elements", document: #"{"foo":"bar"}"#,
            patch: #"[{"op":"add","path":"/baz","value":"qux","xyz":123}]"#, result: #"{"foo":"bar","baz":"qux"}"#),
        Example(
            name: "A.14 ~ escape ordering", document: #"{"/":9,"~1":10}"#,
            patch: #"[{"op":"test","path":"/~01","value":10}]"#, result: #"{"/":9,"~1":10}"#),
        Example(
            name: "A.16 add an array value", document: #"{"foo":["bar"]}"#,
            patch: #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#, result: #"{"foo":["bar",["abc","def"]]}"#),
        Example(
            name: "copy a value", document: #"{"a":{"b":[1]},"c":{}}"#,
            patch: #"[{"op":"copy","from":"/a/b","path":"/c/d"},{"op":"add","path":"/c/d/-","value":2}]"#,
            result: #"{"a":{"b":[1]},"c":{"d":[1,2]}}"#),
        Example(
            name: "replace the whole document", document: #"{"a":1}"#,
            patch: #"[{"op":"replace","path":"","value":{"b":2}}]"#, result: #"{"b":2}"#),
        Example(
            name: "move between arrays", document: #"{"a":[1,2],"b":[3]}"#,
            patch: #"[{"op":"move","from":"/a/0","path":"/b/0"}]"#, result: #"{"a":[2],"b":[1,3]}"#),
        Example(
            name: "move to the end with -", document: #"{"a":[1,2,3]}"#,
            patch: #"[{"op":"move","from":"/a/0","path":"/a/-"}]"#, result: #"{"a":[2,3,1]}"#),
        Example(
            name: "test numbers by value", document: #"{"a":1}"#,
            patch: #"[{"op":"test","path":"/a","value":1.0}]"#, result: #"{"a":1}"#)
    ]

    @Test(arguments: examples)
    func appliesTheExample(_ example: Example) throws {
        #expect(try apply(example.document, example.patch) == json(example.result))
    }

    @Test func failingTestOperationsAreReported() throws {
        // A.9 and A.15
        #expect(throws: StoreError.testFailed(path: Path(["baz"]))) {
            try apply(#"{"baz":"qux","foo":["a",2,"c"]}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#)
        }
        #expect(throws: StoreError.testFailed(path: Path(["~1"]))) {
            try apply(#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":"10"}]"#)
        }
        #expect(throws: StoreError.testFailed(path: Path(["nope"]))) {
            try apply(#"{}"#, #"[{"op":"test","path":"/nope","value":null}]"#)
        }
    }

    @Test func testComparesStringsByTheirScalarsNotByCanonicalEquivalence() throws {
        // RFC 6902 section 4.6: strings are equal when their code points are. "\u00e9" and "e\u0301"
        // are canonically equivalent, which Swift's String == treats as equal.
        #expect(throws: StoreError.testFailed(path: Path(["s"]))) {
            try apply(#"{"s":"\u00e9"}"#, #"[{"op":"test","path":"/s","value":"e\u0301"}]"#)
        }
        #expect(throws: StoreError.testFailed(path: Path(["o"]))) {
            try apply(#"{"o":{"\u00e9":1}}"#, #"[{"op":"test","path":"/o","value":{"e\u0301":1}}]"#)
        }
        #expect(try apply(#"{"s":"\u00e9"}"#, #"[{"op":"test","path":"/s","value":"\u00e9"}]"#) == json(#"{"s":"\u00e9"}"#))
    }

    @Test func addingToANonexistentTargetFails() throws {
        // A.12
        #expect(throws: StoreError.pathNotFound(Path(["baz"]))) {
            try apply(#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#)
        }
    }

    @Test func malformedOperationsAreInvalidPatches() throws {
        let cases = [
            #"{"op":"add"}"#, #"[{"path":"/a"}]"#, #"[{"op":"add","path":"/a"}]"#, #"[{"op":"jump","path":"/a"}]"#,
            #"[{"op":"move","path":"/a"}]"#, #"[{"op":"add","path":"a","value":1}]"#, #"[1]"#,
            #"[{"op":"move","from":"/a","path":"/a/b"}]"#
        ]
        for patch in cases {
            #expect(throws: StoreError.self, "\(patch)") { try apply(#"{"a":{}}"#, patch) }
            do {
                _ = try apply(#"{"a":{}}"#, patch)
            } catch let error as StoreError {
                guard case .invalidPatch = error else {
                    Issue.record("\(patch): \(error)")
                    continue
                }
            }
        }
    }

    @Test func errorsOfMissingTargetsAndRanges() throws {
        #expect(throws: StoreError.pathNotFound(Path(["x"]))) { try apply(#"{}"#, #"[{"op":"remove","path":"/x"}]"#) }
        #expect(throws: StoreError.pathNotFound(Path(["x"]))) {
            try apply(#"{}"#, #"[{"op":"replace","path":"/x","value":1}]"#)
        }
        #expect(throws: StoreError.indexOutOfRange(path: Path(["a"]), index: 3, count: 2)) {
            try apply(#"{"a":[1,2]}"#, #"[{"op":"add","path":"/a/3","value":1}]"#)
        }
        #expect(throws: StoreError.pathNotFound(Path(["a", "01"]))) {
            try apply(#"{"a":[1,2]}"#, #"[{"op":"add","path":"/a/01","value":1}]"#)
        }
    }

    @Test func aFailingOperationUndoesTheEarlierOnes() throws {
        let store = Store()
        try store.put("m", json(#"{"a":[1,2,3],"b":{"c":1}}"#))
        let all = EngineRecorder<Commit>()
        let token = store.observeAll(all.handler)
        let patch = try json(
            #"""
            [{"op":"add","path":"/a/0","value":0}, {"op":"remove","path":"/b/c"},
             {"op":"move","from":"/a/0","path":"/a/3"}, {"op":"copy","from":"/a","path":"/d"},
             {"op":"test","path":"/a/0","value":"no"}]
            """#)
        #expect(throws: StoreError.testFailed(path: Path(["a", "0"]))) { try store.jsonPatch(patch, in: "m") }
        #expect(try store.value(of: "m").description == #"{"a":[1,2,3],"b":{"c":1}}"#)
        #expect(try store.snapshot("m").revision == 1)
        #expect(store.lastSequence == 1 && all.events.isEmpty)
        token.cancel()
    }

    @Test func aPatchIsOneCommitOfGranularChanges() throws {
        let store = Store()
        try store.put("m", json(#"{"a":[1,2,3],"b":{"c":1}}"#))
        let all = EngineRecorder<Commit>()
        let token = store.observeAll(all.handler)
        let patch = try json(
            #"""
            [{"op":"add","path":"/a/1","value":9}, {"op":"replace","path":"/b/c","value":2},
             {"op":"move","from":"/a/0","path":"/a/2"}, {"op":"remove","path":"/a/3"}]
            """#)
        let result = try store.jsonPatch(patch, in: "m")
        #expect(result.sequence == 2 && result.revision == 2)
        #expect(all.events.count == 1)
        guard case .changes(let changes)? = all.events.first?.kind else {
            Issue.record("expected one commit of changes")
            return
        }
        let a = Path(["a"])
        #expect(
            changes == [
                Change(kind: .insert, path: a, value: 9, index: 1),
                Change(kind: .set, path: Path(["b", "c"]), value: 2),
                Change(kind: .move, path: a, from: 0, to: 2),
                Change(kind: .remove, path: a, index: 3)
            ])
        #expect(try store.value(of: "m", at: a) == [9, 2, 1])
        token.cancel()
    }
}
