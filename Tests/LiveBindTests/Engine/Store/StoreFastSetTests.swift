import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The store's fast path for replacing an existing object member (`JSON+FastSet.swift`) and the shared
/// delivery batch behind it: the same results and changes as the general path.
@Suite("Store fast set path") struct StoreFastSetTests {
    let store = Store()

    init() throws {
        try store.put("m", json(#"{"a": 1, "rows": [{"id": "x", "v": 1}, {"id": "y", "v": 2}], "o": {"p": {"q": 1}}}"#))
    }

    @Test func memberInsideAnArrayElementIsReplacedWithOneSetChange() throws {
        let atRows = EngineRecorder<Change>(), atMember = EngineRecorder<Change>(), all = EngineRecorder<Commit>()
        let tokens = [
            store.observe(try path("rows"), in: "m", atRows.handler),
            store.observe(try path("rows.1.v"), in: "m", atMember.handler),
            store.observeAll(all.handler)
        ]
        let result = try store.set(5, at: path("rows.1.v"), in: "m")
        #expect(result == WriteResult(sequence: 2, revision: 2, changed: true))
        #expect(try store.value(of: "m", at: path("rows.1")) == ["id": "y", "v": 5])
        let expected = Change(kind: .set, path: try path("rows.1.v"), value: 5)
        #expect(atRows.events == [expected])
        #expect(atMember.events == [expected])
        #expect(all.events.count == 1)
        if case .changes(let changes)? = all.events.first?.kind { #expect(changes == [expected]) }
        withExtendedLifetime(tokens) {}
    }

    @Test func anArrayElementItselfIsStillAReplace() throws {
        let recorder = EngineRecorder<Change>()
        let token = store.observe(try path("rows"), in: "m", recorder.handler)
        try store.set(["id": "z"], at: path("rows.0"), in: "m")
        #expect(recorder.events == [Change(kind: .replace, path: try path("rows"), value: ["id": "z"], index: 0, key: "z")])
        withExtendedLifetime(token) {}
    }

    @Test func anEqualValueEmitsNothingAndKeepsTheSequence() throws {
        let recorder = EngineRecorder<Change>()
        let token = store.observe(.root, in: "m", recorder.handler)
        let result = try store.set(1.0, at: path("o.p.q"), in: "m")
        #expect(result == WriteResult(sequence: 1, revision: 1, changed: false))
        #expect(recorder.events.isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func aNonFiniteNumberIsRefusedAndChangesNothing() throws {
        #expect(throws: StoreError.invalidValue("numbers must be finite (JSON has no NaN or infinity)")) {
            try store.set(.double(.infinity), at: path("a"), in: "m")
        }
        #expect(try store.value(of: "m", at: path("a")) == 1)
        #expect(store.lastSequence == 1)
    }

    @Test func manySetsReachSeveralObserversInCommitOrder() throws {
        let first = EngineRecorder<Change>(), second = EngineRecorder<Change>()
        let tokens = [store.observe(try path("a"), in: "m", first.handler), store.observe(.root, in: "m", second.handler)]
        for value in 2...200 { try store.set(.int(value), at: path("a"), in: "m") }
        let expected = (2...200).map { Change(kind: .set, path: Path(["a"]), value: .int($0)) }
        #expect(first.events == expected)
        #expect(second.events == expected)
        withExtendedLifetime(tokens) {}
    }
}
