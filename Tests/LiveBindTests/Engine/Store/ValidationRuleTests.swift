import Dispatch
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Validation rules run inside the store's commit, against the state the write lands on.
@Suite("Validation inside the commit") struct ValidationRuleTests {
    private let atMost10 = Validation { value in
        (value.doubleValue ?? 0) > 10 ? .reject("must be at most 10") : .accept
    }

    private func makeStore() throws -> Store {
        let store = Store()
        try store.put("m", ["list": [1, 2]])
        _ = store.addRule(atMost10, at: Path(["list", "2"]), in: "m")
        return store
    }

    @Test func anAppendIsValidatedAtTheIndexItLandsOn() throws {
        let store = try makeStore()
        let list = Path(["list"])
        #expect(throws: StoreError.validationFailed(path: Path(["list", "2"]), reason: "must be at most 10")) {
            try store.append(50, to: list, in: "m")
        }
        try store.append(5, to: list, in: "m")
        try store.append(50, to: list, in: "m")  // lands at 3: no rule there
        #expect(try store.value(of: "m") == ["list": [1, 2, 5, 50]])
        #expect(throws: StoreError.self) { try store.replace(at: 2, in: list, of: "m", with: 11) }
        #expect(throws: StoreError.self) { try store.insert(11, at: 2, in: list, of: "m") }
        #expect(throws: StoreError.self) {
            try store.jsonPatch([["op": "copy", "from": "/list/3", "path": "/list/2"]], in: "m")
        }
        #expect(throws: StoreError.self) {
            try store.write("m") { (editor: inout ModelEditor) throws(StoreError) in try editor.insert(99, at: 2, in: list) }
        }
        #expect(try store.value(of: "m") == ["list": [1, 2, 5, 50]])
    }

    @Test func concurrentAppendsNeverPutAnInvalidValueWhereTheRuleLooks() throws {
        // With validation before the commit (the old HTTP path), both appends were checked at index 2
        // and the one that landed second went to 3 unchecked, or the 50 was checked at 3 and landed at 2.
        for _ in 0..<200 {
            let store = try makeStore()
            DispatchQueue.concurrentPerform(iterations: 2) { i in
                _ = try? store.append(i == 0 ? 5 : 50, to: Path(["list"]), in: "m")
            }
            let list = try #require(try store.value(of: "m", at: Path(["list"])).arrayValue)
            #expect(list.count >= 3)
            #expect(list[2] == 5)
        }
    }

    @Test func aRemovedRuleNoLongerApplies() throws {
        let store = Store()
        try store.put("m", ["x": 1])
        let id = store.addRule(atMost10, at: Path(["x"]), in: "m")
        #expect(throws: StoreError.self) { try store.set(11, at: Path(["x"]), in: "m") }
        store.removeRule(id, in: "m")
        store.removeRule(id, in: "m")
        try store.set(11, at: Path(["x"]), in: "m")
        #expect(try store.value(of: "m", at: Path(["x"])) == 11)
    }

    @Test func anElementsRuleChecksEachElementOfItsArray() throws {
        let store = Store()
        try store.put("m", ["list": [1, 2]])
        _ = store.addRule(atMost10, at: Path(["list"]), in: "m", elements: true)
        try store.append(3, to: Path(["list"]), in: "m")
        #expect(throws: StoreError.validationFailed(path: Path(["list", "3"]), reason: "must be at most 10")) {
            try store.append(30, to: Path(["list"]), in: "m")
        }
        #expect(throws: StoreError.validationFailed(path: Path(["list", "1"]), reason: "must be at most 10")) {
            try store.put("m", ["list": [1, 20]])
        }
        #expect(throws: StoreError.self) { try store.set(11, at: Path(["list", "0"]), in: "m") }
        try store.put("m", ["list": [4, 5, 6]])
        #expect(try store.value(of: "m") == ["list": [4, 5, 6]])
    }

    @Test func anEachBindingsRuleIsCheckedPerElement() throws {
        let (store, registry) = try makeBound(["a": #"{"xs": [1, 2]}"#, "b": "{}"])
        try registry.bind(
            json: bindingJSON(
                #"""
                {"source": "a.xs", "target": "b.ys", "each": true, "validate": {"type": "number", "max": 10, "coerce": true}}
                """#))
        #expect(store.at("b.ys") == [1, 2])
        try store.append(50, to: Path(["xs"]), in: "a")
        #expect(store.at("b.ys") == [1, 2, 10], "each element is coerced, not the array refused")
        try store.set(99, at: Path(["ys", "0"]), in: "b")
        #expect(store.at("b.ys.0") == 10)
    }
}
