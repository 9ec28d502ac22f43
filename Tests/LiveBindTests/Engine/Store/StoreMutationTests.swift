import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Store mutations") struct StoreMutationTests {
    let store: Store
    let all = EngineRecorder<Commit>()
    let token: ObservationToken

    init() throws {
        store = Store()
        try store.put("m", json(#"{"a": 1, "list": [10, 20, 30], "items": [{"id": "x", "n": 1}], "o": {"p": 1}}"#))
        token = store.observeAll(all.handler)
    }

    /// The changes of every commit recorded since `init`.
    var changes: [[Change]] {
        all.events.compactMap { if case .changes(let changes) = $0.kind { changes } else { nil } }
    }

    @Test func setCreatesAndReplacesMembers() throws {
        let created = try store.set("new", at: path("o.q"), in: "m")
        #expect(created == WriteResult(sequence: 2, revision: 2, changed: true))
        try store.set(2, at: path("a"), in: "m")
        #expect(try store.value(of: "m", at: path("o")) == ["p": 1, "q": "new"])
        #expect(
            changes == [
                [Change(kind: .set, path: try path("o.q"), value: "new")],
                [Change(kind: .set, path: try path("a"), value: 2)]
            ])
    }

    @Test func setOfAnEqualValueIsANoOp() throws {
        let result = try store.set(1, at: path("a"), in: "m")
        #expect(result == WriteResult(sequence: 1, revision: 1, changed: false))
        try store.set(1.0, at: path("a"), in: "m")
        #expect(all.events.isEmpty)
        #expect(store.lastSequence == 1)
    }

    @Test func setOnAMissingParentFails() throws {
        #expect(throws: StoreError.pathNotFound(try path("nope"))) { try store.set(1, at: path("nope.x"), in: "m") }
        #expect(throws: StoreError.typeMismatch(path: try path("a"), expected: "object or array", found: "number")) {
            try store.set(1, at: path("a.x"), in: "m")
        }
        #expect(throws: StoreError.typeMismatch(path: .root, expected: "object", found: "number")) {
            try store.set(1, at: .root, in: "m")
        }
        #expect(throws: StoreError.invalidValue("numbers must be finite (JSON has no NaN or infinity)")) {
            try store.set(.double(.nan), at: path("a"), in: "m")
        }
        #expect(store.lastSequence == 1)
    }

    @Test func setOnArrayElementsReplacesOrAppends() throws {
        try store.set(21, at: path("list.1"), in: "m")
        let appended = try store.set(40, at: path("list.-"), in: "m")
        #expect(appended.index == 3)
        try store.set(50, at: path("list.4"), in: "m")
        #expect(throws: StoreError.indexOutOfRange(path: try path("list"), index: 9, count: 5)) {
            try store.set(1, at: path("list.9"), in: "m")
        }
        #expect(throws: StoreError.pathNotFound(try path("list.01"))) { try store.set(1, at: path("list.01"), in: "m") }
        #expect(try store.value(of: "m", at: path("list")) == [10, 21, 30, 40, 50])
        let list = try path("list")
        #expect(
            changes == [
                [Change(kind: .replace, path: list, value: 21, index: 1)],
                [Change(kind: .insert, path: list, value: 40, index: 3)],
                [Change(kind: .insert, path: list, value: 50, index: 4)]
            ])
    }

    @Test func removeMembersAndElements() throws {
        try store.remove(at: path("o.p"), in: "m")
        try store.remove(at: path("list.0"), in: "m")
        try store.remove(at: path("items.0"), in: "m")
        #expect(try store.value(of: "m") == json(#"{"a": 1, "list": [20, 30], "items": [], "o": {}}"#))
        #expect(
            changes == [
                [Change(kind: .remove, path: try path("o.p"))],
                [Change(kind: .remove, path: try path("list"), index: 0)],
                [Change(kind: .remove, path: try path("items"), index: 0, key: "x")]
            ])
        #expect(throws: StoreError.pathNotFound(try path("o.p"))) { try store.remove(at: path("o.p"), in: "m") }
        #expect(throws: StoreError.indexOutOfRange(path: try path("list"), index: 2, count: 2)) {
            try store.remove(at: path("list.2"), in: "m")
        }
        #expect(throws: StoreError.self) { try store.remove(at: .root, in: "m") }
    }

    @Test func insertAppendReplaceMove() throws {
        let list = try path("list")
        try store.insert(5, at: 0, in: list, of: "m")
        let appended = try store.append(40, to: list, in: "m")
        #expect(appended.index == 4)
        try store.replace(at: 1, in: list, of: "m", with: 11)
        try store.move(from: 0, to: 4, in: list, of: "m")
        #expect(try store.value(of: "m", at: list) == [11, 20, 30, 40, 5])
        #expect(
            changes == [
                [Change(kind: .insert, path: list, value: 5, index: 0)],
                [Change(kind: .insert, path: list, value: 40, index: 4)],
                [Change(kind: .replace, path: list, value: 11, index: 1)],
                [Change(kind: .move, path: list, from: 0, to: 4)]
            ])
        #expect(try !store.replace(at: 0, in: list, of: "m", with: 11).changed)
        #expect(try !store.move(from: 2, to: 2, in: list, of: "m").changed)
    }

    @Test func arrayOperationsCheckTypesAndRanges() throws {
        let list = try path("list")
        #expect(throws: StoreError.indexOutOfRange(path: list, index: 4, count: 3)) {
            try store.insert(1, at: 4, in: list, of: "m")
        }
        #expect(throws: StoreError.indexOutOfRange(path: list, index: -1, count: 3)) {
            try store.insert(1, at: -1, in: list, of: "m")
        }
        #expect(throws: StoreError.indexOutOfRange(path: list, index: 3, count: 3)) {
            try store.replace(at: 3, in: list, of: "m", with: 1)
        }
        #expect(throws: StoreError.indexOutOfRange(path: list, index: 3, count: 3)) {
            try store.move(from: 0, to: 3, in: list, of: "m")
        }
        #expect(throws: StoreError.typeMismatch(path: try path("o"), expected: "array", found: "object")) {
            try store.append(1, to: path("o"), in: "m")
        }
        #expect(store.lastSequence == 1)
    }

    @Test func arrayChangesCarryTheElementsID() throws {
        let items = try path("items")
        try store.append(["id": "y", "n": 2], to: items, in: "m")
        try store.move(from: 1, to: 0, in: items, of: "m")
        try store.replace(at: 1, in: items, of: "m", with: ["id": "z"])
        #expect(changes.map { $0[0].key } == ["y", "y", "z"])
    }

    @Test func writeCommitsSeveralEditsAtOnce() throws {
        let result = try store.write("m") { (editor) throws(StoreError) in
            try editor.set(2, at: Path(["a"]))
            try editor.append(40, to: Path(["list"]))
            #expect(try editor.value(at: Path(["list", "3"])) == 40)
        }
        #expect(result == WriteResult(sequence: 2, revision: 2, index: 3, changed: true))
        #expect(all.events.count == 1)
        #expect(changes.first?.count == 2)
    }

    @Test func aFailedWriteLeavesEverythingUntouched() throws {
        let before = try store.snapshot("m")
        #expect(throws: StoreError.pathNotFound(Path(["missing"]))) {
            try store.write("m") { (editor) throws(StoreError) in
                try editor.set(2, at: Path(["a"]))
                try editor.set("added", at: Path(["o", "new"]))
                try editor.remove(at: Path(["o", "p"]))
                try editor.append(40, to: Path(["list"]))
                try editor.insert(0, at: 0, in: Path(["list"]))
                try editor.move(from: 0, to: 2, in: Path(["list"]))
                try editor.replace(at: 1, in: Path(["list"]), with: 99)
                try editor.remove(at: Path(["list", "0"]))
                try editor.set(["x": 1], at: .root)
                try editor.remove(at: Path(["missing"]))
            }
        }
        let after = try store.snapshot("m")
        #expect(after.value == before.value)
        #expect(after.value.description == before.value.description)  // member order too
        #expect(after.revision == 1 && store.lastSequence == 1)
        #expect(all.events.isEmpty)
    }
}
