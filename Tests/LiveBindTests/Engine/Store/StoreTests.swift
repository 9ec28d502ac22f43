import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Store") struct StoreTests {
    func makeStore() throws -> Store {
        let store = Store()
        try store.put("sensor", json(#"{"temperature": 20.5, "readings": [1, 2, 3], "meta": {"unit": "C"}}"#))
        return store
    }

    @Test func putCreatesListsAndReplacesModels() throws {
        let store = Store(startingSequence: 100)
        let first = try store.put("b", ["x": 1])
        #expect(first.created && first.result == WriteResult(sequence: 101, revision: 1, changed: true))
        try store.put("a", [:])
        let second = try store.put("b", ["x": 2])
        #expect(!second.created && second.result.revision == 2 && second.result.sequence == 103)
        #expect(store.modelNames().map(\.name) == ["a", "b"])
        #expect(store.modelNames().map(\.revision) == [1, 2])
        #expect(try store.value(of: "b") == ["x": 2])
        #expect(store.lastSequence == 103)
    }

    @Test func putOfAnEqualValueChangesNothing() throws {
        let store = try makeStore()
        let result = try store.put("sensor", json(#"{"readings": [1, 2, 3], "temperature": 20.5, "meta": {"unit": "C"}}"#))
        #expect(result.result == WriteResult(sequence: 1, revision: 1, changed: false))
    }

    @Test func aStringOfOtherScalarsIsWrittenEvenWhenCanonicallyEquivalent() throws {
        // "e\u{301}" over "\u{e9}" was taken for an equal value, so the write changed nothing and a reader
        // got back other scalars than it wrote.
        let store = try makeStore()
        let decomposed = "e\u{301}"
        let set = try store.set(.string(decomposed), at: path("meta.unit"), in: "sensor")
        #expect(set.changed)
        try store.set(.string("\u{e9}"), at: path("meta.unit"), in: "sensor")
        let written = try store.set(.string(decomposed), at: path("meta.unit"), in: "sensor")
        #expect(written.changed)
        #expect(try Array(store.value(of: "sensor", at: path("meta.unit")).stringValue!.unicodeScalars) == ["e", "\u{301}"])
        let put = try store.put("keys", ["\u{e9}": 1])
        #expect(put.created)
        #expect(try store.put("keys", [decomposed: 1]).result.changed)
        #expect(try store.value(of: "keys").objectValue!.keys.map { Array($0.unicodeScalars) } == [["e", "\u{301}"]])
    }

    @Test func modelsMustBeObjectsWithValidNames() throws {
        let store = Store()
        #expect(throws: StoreError.typeMismatch(path: .root, expected: "object", found: "array")) {
            try store.put("a", [1])
        }
        for bad in ["", "a b", "a/b", "a.b", "é", String(repeating: "x", count: 129)] {
            #expect(throws: StoreError.invalidModelName(bad)) { try store.put(bad, [:]) }
        }
        try store.put(String(repeating: "x", count: 128), [:])
        try store.put("Az09_-", [:])
    }

    @Test func dropDeletesAndMissingModelsAreReported() throws {
        let store = try makeStore()
        let result = try store.drop("sensor")
        #expect(result == WriteResult(sequence: 2, revision: 2, changed: true))
        #expect(throws: StoreError.modelNotFound("sensor")) { try store.value(of: "sensor") }
        #expect(throws: StoreError.modelNotFound("sensor")) { try store.drop("sensor") }
        #expect(throws: StoreError.modelNotFound("nope")) { try store.set(1, at: path("x"), in: "nope") }
    }

    @Test func readsValuesAtPaths() throws {
        let store = try makeStore()
        #expect(try store.value(of: "sensor", at: path("readings.1")) == 2)
        #expect(try store.value(of: "sensor", at: Path(pointer: "/meta/unit")) == "C")
        #expect(throws: StoreError.pathNotFound(try path("meta.nope"))) {
            try store.value(of: "sensor", at: path("meta.nope"))
        }
        #expect(throws: StoreError.indexOutOfRange(path: try path("readings"), index: 5, count: 3)) {
            try store.value(of: "sensor", at: path("readings.5"))
        }
        #expect(throws: StoreError.typeMismatch(path: try path("temperature"), expected: "object or array", found: "number")) {
            try store.value(of: "sensor", at: path("temperature.x"))
        }
    }

    @Test func snapshotsAreOneConsistentCut() throws {
        let store = try makeStore()
        try store.put("alpha", ["a": 1])
        let cut = store.snapshot(models: nil)
        #expect(cut.sequence == 2)
        #expect(cut.models.map(\.name) == ["alpha", "sensor"])
        #expect(store.snapshot(models: ["sensor", "missing"]).models.map(\.name) == ["sensor"])
        let one = try store.snapshot("alpha")
        #expect(one.revision == 1 && one.value == ["a": 1])
    }

    @Test func ifRevisionGuardsWrites() throws {
        let store = try makeStore()
        #expect(throws: StoreError.revisionMismatch(expected: 7, actual: 1)) {
            try store.set(1, at: path("temperature"), in: "sensor", ifRevision: 7)
        }
        try store.set(1, at: path("temperature"), in: "sensor", ifRevision: 1)
        #expect(throws: StoreError.revisionMismatch(expected: 0, actual: 2)) {
            try store.put("sensor", [:], ifRevision: 0)
        }
        try store.put("fresh", [:], ifRevision: 0)
        #expect(throws: StoreError.revisionMismatch(expected: 1, actual: 2)) {
            try store.drop("sensor", ifRevision: 1)
        }
        #expect(store.lastSequence == 3)
    }
}
