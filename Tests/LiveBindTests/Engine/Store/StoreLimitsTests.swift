import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// A value nested `levels` containers deep: `{"a": {"a": … 1 …}}`.
func nested(_ levels: Int) -> JSON {
    var value: JSON = 1
    for _ in 0..<levels { value = .object(["a": value]) }
    return value
}

/// A path of `count` `a` components.
func deepPath(_ count: Int) -> Path { Path(Array(repeating: "a", count: count)) }

@Suite("Store limits")
struct StoreLimitsTests {
    private func makeStore(_ configure: (inout StoreLimits) -> Void) -> Store {
        var limits = StoreLimits()
        configure(&limits)
        return Store(limits: limits)
    }

    /// The store's kept sizes agree with sizes measured afresh from the documents.
    private func expectSizesConsistent(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var total = 0
        for (name, _) in store.modelNames() {
            let measured = try store.snapshot(name).value.countedSize
            #expect(try store.size(of: name) == measured, "size of \(name)", sourceLocation: sourceLocation)
            total += measured + StoreLimits.modelOverhead
        }
        #expect(store.totalSize == total, sourceLocation: sourceLocation)
    }

    @Test func countedSizeIsTheEncodingPlusOneSeparatorPerNonEmptyContainer() {
        let values: [JSON] = [
            1, -12, 0, 1.5, -0.001, 1e300, "", "a\"b\\c\n\u{1}é", true, false, .null, [], [:],
            ["rows": [1, 2, ["x": [], "y\t": [:]]], "name": "sensor"]
        ]
        for value in values {
            var nonEmpty = 0
            var pending = [value]
            while let next = pending.popLast() {
                switch next {
                case .array(let elements): if !elements.isEmpty { nonEmpty += 1 }; pending += elements
                case .object(let members): if !members.isEmpty { nonEmpty += 1 }; pending += members.values
                default: break
                }
            }
            #expect(value.countedSize == value.encoded().count + nonEmpty, "\(value)")
        }
    }

    @Test func aWriteDeeperThanTheLimitIsRefusedAndChangesNothing() throws {
        let store = makeStore { $0.maxDepth = 4 }
        try store.put("m", ["a": ["a": [:]], "list": []])  // 3 levels
        let before = try store.snapshot("m")
        try store.set(nested(1), at: deepPath(3), in: "m")  // 4 levels: allowed
        #expect(throws: StoreError.limitExceeded(.depth, limit: 4, actual: 5)) {
            try store.set(nested(2), at: deepPath(3), in: "m")
        }
        #expect(throws: StoreError.limitExceeded(.depth, limit: 4, actual: 5)) {
            try store.append(nested(3), to: Path(["list"]), in: "m")  // root, list, then 3 more
        }
        #expect(throws: StoreError.limitExceeded(.depth, limit: 4, actual: 5)) { try store.put("n", nested(5)) }
        #expect(throws: StoreError.self) { try store.mergePatch(["a": ["a": ["a": ["a": ["a": 1]]]]], in: "m") }
        #expect(try store.snapshot("m").revision == before.revision + 1)
        #expect(store.modelNames().map(\.name) == ["m"])
        try expectSizesConsistent(store)
    }

    @Test func theDefaultDepthIs64AndAVeryDeepValueIsRefusedWithoutRecursion() throws {
        let store = Store()
        try store.put("m", [:])
        try store.set(nested(63), at: Path(["a"]), in: "m")  // 64 levels with the root
        #expect(throws: StoreError.limitExceeded(.depth, limit: 64, actual: 65)) {
            try store.set(nested(64), at: Path(["b"]), in: "m")
        }
        // Built in Swift, far deeper than any parser allows: measured without recursing, refused.
        let deep = nested(3_000)
        #expect(throws: StoreError.limitExceeded(.depth, limit: 64, actual: 65)) { try store.set(deep, at: Path(["c"]), in: "m") }
        try expectSizesConsistent(store)
    }

    @Test func successiveWritesCannotGrowAModelDeeperThanTheLimit() throws {
        // The crash of issue 13: each write adds a nested value one level below the last.
        let store = Store()
        try store.put("m", [:])
        var path = Path(["a"])
        var refused = false
        for _ in 0..<100 {
            do {
                try store.set(nested(10), at: path, in: "m")
            } catch StoreError.limitExceeded(.depth, _, _) {
                refused = true
                break
            }
            path = Path(path.components + Array(repeating: "a", count: 10))
        }
        #expect(refused)
        try expectSizesConsistent(store)
    }

    @Test func aModelCannotGrowPastItsSizeLimitByAnyWritePath() throws {
        let store = makeStore { $0.maxModelBytes = 200 }
        try store.put("m", ["list": [], "name": "x"])
        let big = JSON.string(String(repeating: "x", count: 300))
        let list = Path(["list"]), name = Path(["name"])
        let attempts: [(String, () throws(StoreError) -> Void)] = [
            ("set member", { () throws(StoreError) in try store.set(big, at: name, in: "m") }),
            ("set new member", { () throws(StoreError) in try store.set(big, at: Path(["other"]), in: "m") }),
            ("append", { () throws(StoreError) in try store.append(big, to: list, in: "m") }),
            ("insert", { () throws(StoreError) in try store.insert(big, at: 0, in: list, of: "m") }),
            ("put", { () throws(StoreError) in try store.put("m", ["list": [], "name": big]) }),
            ("merge patch", { () throws(StoreError) in try store.mergePatch(["name": big], in: "m") }),
            (
                "json patch",
                { () throws(StoreError) in
                    try store.jsonPatch([["op": "add", "path": "/list/-", "value": big]], in: "m")
                }
            )
        ]
        let before = try store.snapshot("m")
        for (name, attempt) in attempts {
            #expect(throws: StoreError.self, "\(name)") { try attempt() }
            do { try attempt() } catch { #expect(error.isLimit(.modelSize), "\(name): \(error)") }
        }
        let after = try store.snapshot("m")
        #expect(after.revision == before.revision && after.value == before.value)
        try expectSizesConsistent(store)
        // Shrinking is always allowed, and small writes still fit.
        try store.append("ok", to: list, in: "m")
        try expectSizesConsistent(store)
    }

    @Test func replacingAMemberPastTheLimitPutsTheOldValueBack() throws {
        let store = makeStore { $0.maxModelBytes = 100 }
        try store.put("m", ["a": "small", "b": [1, 2, 3]])
        #expect(throws: StoreError.self) { try store.set(.string(String(repeating: "y", count: 200)), at: Path(["a"]), in: "m") }
        #expect(throws: StoreError.self) {
            try store.replace(at: 1, in: Path(["b"]), of: "m", with: .string(String(repeating: "y", count: 200)))
        }
        #expect(try store.value(of: "m") == ["a": "small", "b": [1, 2, 3]])
        try expectSizesConsistent(store)
    }

    @Test func allModelsTogetherCannotPassTheStoreLimit() throws {
        let store = makeStore { $0.maxStoreBytes = 300 + 2 * StoreLimits.modelOverhead }
        let filler = JSON.string(String(repeating: "z", count: 100))
        try store.put("a", ["v": filler])
        try store.put("b", ["v": filler])
        #expect(throws: StoreError.self) { try store.put("c", ["v": filler]) }
        do { try store.put("c", ["v": filler]) } catch { #expect(error.isLimit(.storeSize)) }
        #expect(store.modelNames().map(\.name) == ["a", "b"])
        try store.drop("a")
        try store.put("c", ["v": filler])
        try expectSizesConsistent(store)
    }

    @Test func manyEmptyModelsCountTheirOverheadAgainstTheStoreLimit() throws {
        let store = makeStore { $0.maxStoreBytes = 10 * StoreLimits.modelOverhead }
        var created = 0
        for i in 0..<100 {
            do { try store.put("m\(i)", [:]) } catch { #expect(error.isLimit(.storeSize)); break }
            created += 1
        }
        #expect(created == 9)
        try expectSizesConsistent(store)
    }

    @Test func aJSONPatchWithTooManyOperationsIsRefused() throws {
        let store = makeStore { $0.maxPatchOperations = 10 }
        try store.put("m", ["n": 0])
        let ops = JSON.array(Deque((0..<11).map { i in ["op": "replace", "path": "/n", "value": .int(i)] }))
        #expect(throws: StoreError.limitExceeded(.patchOperations, limit: 10, actual: 11)) { try store.jsonPatch(ops, in: "m") }
        try store.jsonPatch(.array(Deque(ops.arrayValue!.prefix(10))), in: "m")
        #expect(try store.value(of: "m") == ["n": 9])
    }

    @Test func copyingTheWholeDocumentOverAndOverStopsAtTheSizeLimit() throws {
        // Issue 13: 40 copies of "" double the model each time; the limit stops it after a few.
        let store = Store()
        try store.put("m", ["seed": .string(String(repeating: "s", count: 1_000))])
        let ops = JSON.array(Deque((0..<40).map { i in ["op": "copy", "from": "", "path": .string("/c\(i)")] }))
        #expect(throws: StoreError.self) { try store.jsonPatch(ops, in: "m") }
        do { try store.jsonPatch(ops, in: "m") } catch { #expect(error.isLimit(.modelSize)) }
        #expect(try store.value(of: "m").objectValue?.count == 1)
        try expectSizesConsistent(store)
    }

    @Test func movingALargeValueBackAndForthIsBoundedByTheWorkLimit() throws {
        let store = makeStore { $0.maxModelBytes = 10_000 }
        try store.put("m", ["a": .string(String(repeating: "m", count: 9_000)), "x": [:]])
        var ops: [JSON] = []
        for _ in 0..<10 {
            ops.append(["op": "move", "from": "/a", "path": "/x/a"])
            ops.append(["op": "move", "from": "/x/a", "path": "/a"])
        }
        #expect(throws: StoreError.self) { try store.jsonPatch(.array(Deque(ops)), in: "m") }
        do { try store.jsonPatch(.array(Deque(ops)), in: "m") } catch { #expect(error.isLimit(.writeWork), "\(error)") }
        try store.jsonPatch(.array(Deque(ops.prefix(2))), in: "m")  // one round trip is fine
        try expectSizesConsistent(store)
    }

    @Test func keptSizesFollowEveryKindOfWrite() throws {
        let store = Store()
        try store.put("m", ["rows": [], "meta": ["n": 0]])
        let rows = Path(["rows"])
        for i in 0..<20 {
            try store.append(["id": .int(i), "name": .string("row \"\(i)\"\n")], to: rows, in: "m")
        }
        try store.insert(1.25, at: 3, in: rows, of: "m")
        try store.replace(at: 4, in: rows, of: "m", with: ["nested": [[1], [2, 3]]])
        try store.move(from: 0, to: 10, in: rows, of: "m")
        try store.remove(at: Path(["rows", "5"]), in: "m")
        try store.set("é", at: Path(["meta", "n"]), in: "m")
        try store.set([1, 2], at: Path(["meta", "new"]), in: "m")
        try store.remove(at: Path(["meta", "new"]), in: "m")
        try store.mergePatch(["meta": ["n": .null, "m": ["deep": true]]], in: "m")
        try store.jsonPatch(
            [
                ["op": "copy", "from": "/meta", "path": "/copy"],
                ["op": "move", "from": "/rows/0", "path": "/moved"],
                ["op": "remove", "path": "/rows/1"]
            ], in: "m")
        try store.write("m") { (editor: inout ModelEditor) throws(StoreError) in
            try editor.set("x", at: Path(["w"]))
            try editor.remove(at: Path(["w"]))
        }
        try store.put("other", ["k": "v"])
        try expectSizesConsistent(store)
        try store.drop("other")
        try store.put("m", ["small": true])
        try expectSizesConsistent(store)
    }

    @Test func aFailedWriteLeavesTheSizesAsTheyWere() throws {
        let store = makeStore { $0.maxModelBytes = 500 }
        try store.put("m", ["a": [1, 2, 3]])
        let size = try store.size(of: "m")
        #expect(throws: StoreError.self) {
            try store.jsonPatch(
                [
                    ["op": "add", "path": "/b", "value": "fits"],
                    ["op": "add", "path": "/c", "value": .string(String(repeating: "c", count: 600))]
                ], in: "m")
        }
        #expect(try store.size(of: "m") == size)
        #expect(throws: StoreError.self) {
            try store.jsonPatch([["op": "add", "path": "/b", "value": 1], ["op": "test", "path": "/b", "value": 2]], in: "m")
        }
        #expect(try store.size(of: "m") == size)
        try expectSizesConsistent(store)
    }

    @Test func nonFiniteNumbersAreStillRefused() throws {
        let store = Store()
        try store.put("m", ["a": 1])
        #expect(throws: StoreError.self) { try store.set(.double(.nan), at: Path(["a"]), in: "m") }
        #expect(throws: StoreError.self) { try store.set(["x": [.double(.infinity)]], at: Path(["b"]), in: "m") }
        #expect(try store.value(of: "m") == ["a": 1])
    }
}

extension Error {
    /// Whether this is `StoreError.limitExceeded` for `limit`.
    func isLimit(_ limit: StoreLimit) -> Bool {
        guard let error = self as? StoreError, case .limitExceeded(let found, _, _) = error else { return false }
        return found == limit
    }
}
