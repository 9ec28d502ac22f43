import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Binding cycles") struct CycleTests {
    @Test func cycleOfThreeTwoWayBindingsSettles() throws {
        let (store, registry) = try makeBound(["a": #"{"v": 1}"#, "b": "{}", "c": "{}"])
        try registry.bind(BindingSpec("a.v", "b.v", mode: .twoWay))
        try registry.bind(BindingSpec("b.v", "c.v", mode: .twoWay, transform: TransformSpec("scale", ["factor": 2])))
        try registry.bind(BindingSpec("c.v", "a.v", mode: .twoWay, transform: TransformSpec("scale", ["factor": 0.5])))
        #expect(store.at("b.v") == 1 && store.at("c.v") == 2)
        for (index, (path, value)) in [("a.v", 5.0), ("b.v", 7.0), ("c.v", 3.0), ("a.v", -1.5)].enumerated() {
            let before = store.lastSequence
            try store.set(.double(value), at: path)
            let expectedA: Double = path == "c.v" ? value / 2 : value
            #expect(store.at("a.v") == .double(expectedA), "step \(index)")
            #expect(store.at("b.v") == .double(expectedA))
            #expect(store.at("c.v") == .double(expectedA * 2))
            #expect(store.lastSequence - before <= 3, "one write plus at most two binding writes: it settled")
        }
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }

    @Test func cycleWhoseTransformsDoNotComposeToIdentityIsRefused() throws {
        let (store, registry) = try makeBound(["a": #"{"v": 1}"#, "b": "{}", "c": "{}"])
        try registry.bind(BindingSpec("a.v", "b.v", mode: .twoWay, transform: TransformSpec("scale", ["factor": 2])))
        try registry.bind(BindingSpec("b.v", "c.v", mode: .twoWay))
        do {
            try registry.bind(BindingSpec("c.v", "a.v", mode: .twoWay))
            Issue.record("expected the cycle to be refused")
        } catch {
            guard case .unsettledCycle(let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(reason.contains("would close the cycle"))
            #expect(reason.contains("could never settle"))
        }
        #expect(registry.all.count == 2)
        #expect(store.at("c.v") == 2)
    }

    @Test func oneWayCycleIsRefused() throws {
        let (_, registry) = try makeBound(["a": #"{"v": 1}"#, "b": "{}", "c": "{}"])
        try registry.bind(BindingSpec("a.v", "b.v"))
        try registry.bind(BindingSpec("b.v", "c.v"))
        #expect(throws: BindingError.self) { try registry.bind(BindingSpec("c.v", "a.v")) }
        #expect(throws: BindingError.self) { try registry.bind(BindingSpec("b.v", "a.v", mode: .twoWay)) }
        #expect(registry.all.count == 2)
    }

    @Test func overlappingSourceAndTargetIsRefused() throws {
        let (_, registry) = try makeBound(["a": #"{"v": {"w": 1}}"#])
        #expect(throws: BindingError.self) { try registry.bind(BindingSpec("a.v", "a.v.copy")) }
        #expect(throws: BindingError.self) { try registry.bind(BindingSpec("a", "a.v")) }
    }

    @Test func loopAcrossTwoRegistriesIsStoppedByTheLoopGuard() throws {
        let store = Store()
        try store.put("a", ["v": 0])
        try store.put("b", [:])
        let first = BindingRegistry(store: store), second = BindingRegistry(store: store)
        // Each registry sees only its own binding, so neither can refuse the loop at bind time.
        let up = try first.bind(BindingSpec("a.v", "b.v", transform: TransformSpec("scale", ["offset": 1])))
        let back = try second.bind(BindingSpec("b.v", "a.v"))
        // Both registries count their arcs in the store's one census: two arcs, so no loop-free chain
        // is longer than 2 × 2 steps.
        let limit = up.census.loopLimit
        #expect(up.census === back.census && limit == 2 * 2 + 2)
        #expect(store.lastSequence <= 2 + UInt64(limit) + 2, "propagation stopped")
        let stopped = [up.lastError, back.lastError].compactMap { $0 }
        #expect(stopped.contains { if case .propagationLimit = $0 { true } else { false } })
        #expect((store.at("b.v")?.doubleValue ?? 0) >= Double(limit / 2))
    }
}
