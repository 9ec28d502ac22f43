import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Binding graph") struct BindingGraphTests {
    private func searched(_ registry: BindingRegistry) -> Int { registry.state.withLock { $0.graph.searchedStates } }

    private func refusal(_ body: () throws(BindingError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            guard case .unsettledCycle(let reason) = error else { return "wrong error: \(error)" }
            return reason
        }
    }

    @Test func buildingAThousandLinkChainInEitherOrderSearchesNothing() throws {
        // Nothing reads what the new link writes (forward order) or writes what it reads (backward
        // order), so no search starts: each check costs the length of the link's two paths.
        let (_, forward) = try makeBound(["c": #"{"v0": 0}"#])
        for index in 0..<1000 { try forward.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)")) }
        #expect(searched(forward) == 0)
        let (_, backward) = try makeBound(["c": #"{"v0": 0}"#])
        for index in (0..<1000).reversed() { try backward.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)")) }
        #expect(searched(backward) == 0)
    }

    @Test func closingAThousandLinkLoopIsRefusedByOneLinearSearchThatNamesIt() throws {
        let (store, registry) = try makeBound(["c": #"{"v0": 0}"#])
        for index in 0..<1000 { try registry.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)")) }
        let before = store.lastSequence
        let reason = refusal { () throws(BindingError) in try registry.bind(BindingSpec("c.v1000", "c.v0")) }
        #expect(reason?.hasPrefix("binding c.v1000 → c.v0 would close the cycle c.v1000 → c.v0 → c.v1 → c.v2 → ") == true)
        #expect(reason?.contains("c.v8 → … 982 more … → c.v991") == true, "a long loop is named by its ends")
        #expect(reason?.contains("c.v999 → c.v1000, which contains one-way bindings") == true)
        #expect(searched(registry) <= 2 * 1001, "each (arc, flag) state at most once")
        #expect(registry.all.count == 1000 && store.lastSequence == before, "refused: nothing changed")
    }

    @Test func aLoopLongerThanTheOldSearchDepthIsRefused() throws {
        // The old check followed cycles of at most 12 arcs and let longer ones through to the run-time guard.
        let (_, registry) = try makeBound(["a": #"{"v0": 0}"#])
        for index in 0..<20 { try registry.bind(BindingSpec("a.v\(index)", "a.v\(index + 1)", mode: .twoWay)) }
        let reason = refusal { () throws(BindingError) in try registry.bind(BindingSpec("a.v20", "a.v0")) }
        #expect(reason?.contains("contains one-way bindings") == true)
    }

    @Test func aLadderOfDiamondsIsCheckedInLinearTime() throws {
        // x0 → y0.a, x0 → y0.b, y0 → x1, …: 2^30 paths from x0 to x30, which a search over paths would
        // walk one by one, and about 90 arcs.
        let (_, registry) = try makeBound(["d": #"{"x0": 1}"#])
        for index in 0..<30 {
            try registry.bind(BindingSpec("d.x\(index)", "d.y\(index).a"))
            try registry.bind(BindingSpec("d.x\(index)", "d.y\(index).b"))
            try registry.bind(BindingSpec("d.y\(index)", "d.x\(index + 1)"))
        }
        let reason = refusal { () throws(BindingError) in try registry.bind(BindingSpec("d.x30", "d.x0")) }
        #expect(reason?.contains("would close the cycle d.x30 → d.x0 → ") == true)
        #expect(searched(registry) <= 2 * 91)
    }

    @Test func aLoopThatOnlyTheBackwardArcOfANewTwoWayBindingClosesIsRefused() throws {
        let (_, registry) = try makeBound(["a": #"{"v": 1}"#, "b": "{}", "c": "{}"])
        try registry.bind(BindingSpec("a.v", "b.v"))
        try registry.bind(BindingSpec("b.v", "c.v"))
        // Forward a.v → c.v starts nothing; backward c.v → a.v → b.v → c.v goes round one-way bindings.
        let reason = refusal { () throws(BindingError) in try registry.bind(BindingSpec("a.v", "c.v", mode: .twoWay)) }
        #expect(reason?.contains("would close the cycle c.v → a.v → b.v → c.v") == true)
    }

    @Test func aTwoWayRingOfFiftyThatComposesToTheIdentityIsAcceptedAndSettles() throws {
        let (store, registry) = try makeBound(["r": #"{"v0": 1}"#])
        for index in 0..<49 { try registry.bind(BindingSpec("r.v\(index)", "r.v\(index + 1)", mode: .twoWay)) }
        try registry.bind(BindingSpec("r.v49", "r.v0", mode: .twoWay))
        let before = store.lastSequence
        try store.set(8, at: "r.v17")
        for index in 0..<50 { #expect(store.at("r.v\(index)") == 8, "r.v\(index)") }
        #expect(store.lastSequence - before <= 50, "one write per node: it settled")
        #expect(registry.all.allSatisfy { $0.lastError == nil })
        let bad = refusal { () throws(BindingError) in
            try registry.bind(BindingSpec("r.v10", "r.v30", mode: .twoWay, transform: TransformSpec("scale", ["factor": 2])))
        }
        #expect(bad?.contains("could never settle") == true)
    }

    @Test func aLoopThroughOverlappingPathsIsRefused() throws {
        let (_, registry) = try makeBound(["a": #"{"v": {"w": 1}}"#, "b": "{}"])
        try registry.bind(BindingSpec("a.v", "b.v", mode: .twoWay))
        let reason = refusal { () throws(BindingError) in try registry.bind(BindingSpec("b.v", "a.v.w", mode: .twoWay)) }
        #expect(reason?.contains("through the overlapping paths") == true)
    }

    @Test func unbindingFreesTheGraphAndTheCensus() throws {
        let (_, registry) = try makeBound(["a": #"{"v": 0}"#, "b": "{}"])
        for round in 0..<3 {
            for index in 0..<100 { try registry.bind(BindingSpec("a.v", "b.p\(round).q\(index)", mode: .twoWay)) }
            for binding in registry.all { try registry.unbind(id: binding.id) }
        }
        let (arcs, nodes) = registry.state.withLock { ($0.graph.arcCount, $0.graph.nodeCount) }
        #expect(arcs == 0 && nodes == 0)
        #expect(registry.state.withLock { $0.census.arcs } == 0)
        // With a → b gone, b → a closes nothing.
        try registry.bind(BindingSpec("a.v", "b.v"))
        try registry.unbind(id: registry.all[0].id)
        try registry.bind(BindingSpec("b.v", "a.v"))
    }

    @Test func aReleasedRegistryLeavesTheCensusOfItsStore() throws {
        let store = Store()
        try store.put("a", ["v": 0])
        let kept = BindingRegistry(store: store)
        try kept.bind(BindingSpec("a.v", "a.w"))
        do {
            let released = BindingRegistry(store: store)
            try released.bind(BindingSpec("a.v", "a.x", mode: .twoWay))
            #expect(kept.state.withLock { $0.census.arcs } == 3)
        }
        #expect(kept.state.withLock { $0.census.arcs } == 1)
        #expect(kept.state.withLock { $0.census.loopLimit } == 2 * 3 + 2, "the limit keeps the peak")
    }
}
