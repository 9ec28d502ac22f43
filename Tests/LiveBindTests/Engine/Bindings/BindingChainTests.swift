import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Binding chains") struct BindingChainTests {
    /// `c.v0 → c.v1 → … → c.v<links>`, one-way (or two-way) bindings made in that order.
    private func bindChain(_ registry: BindingRegistry, links: Int, mode: BindingMode = .oneWay) throws {
        for index in 0..<links { try registry.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)", mode: mode)) }
    }

    @Test func aFortyLinkChainCarriesAHeadWriteToItsEnd() throws {
        // The engine stopped at step 32 ("bindings form a loop that does not settle") and left v33…v40 stale.
        let (store, registry) = try makeBound(["c": #"{"v0": 0}"#])
        try bindChain(registry, links: 40)
        try store.set(7, at: "c.v0")
        for index in 0...40 { #expect(store.at("c.v\(index)") == 7, "c.v\(index)") }
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }

    /// Bindings made over models that already hold their values (how long that takes is
    /// `make bench`'s `binding/bind-1000-link-chain`, no longer a timed bound here).
    @Test func aThousandLinkChainOverExistingValuesCarriesAHeadWriteToItsTail() throws {
        let (store, registry) = try makeBound(["c": chainModel(1001)])
        for index in 0..<1000 { try registry.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)")) }
        try store.set(7, at: "c.v0")
        #expect(store.at("c.v1000") == 7)
        #expect(store.at("c.v500") == 7)
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }

    @Test func aFreshThousandLinkChainWritesEveryTargetAsItIsBound() throws {
        let (store, registry) = try makeBound(["c": #"{"v0": 3}"#])
        try bindChain(registry, links: 1000)
        #expect(store.at("c.v1000") == 3)
        try store.set(4, at: "c.v0")
        #expect(store.at("c.v1000") == 4)
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }

    @Test func propagationAlongAThousandLinksDoesNotDeepenTheStack() throws {
        // Each binding's write is queued by the store and delivered by the same loop that delivered the
        // write before it, so the tail's observer runs as shallow as the head's would.
        let (store, registry) = try makeBound(["c": #"{"v0": 0}"#])
        try bindChain(registry, links: 1000)
        let frames = Collected<Int>()
        let observation = store.observe(Path.root.appending("v1000"), in: "c") { _ in
            frames.append(Thread.callStackSymbols.count)
        }
        try store.set(1, at: "c.v0")
        observation.cancel()
        #expect(frames.all.count == 1)
        #expect((frames.all.first ?? .max) < 150, "\(frames.all) frames at the tail")
    }

    @Test func aThousandLinkTwoWayChainCarriesWritesBothWays() throws {
        let (store, registry) = try makeBound(["c": #"{"v0": 1}"#])
        try bindChain(registry, links: 1000, mode: .twoWay)
        #expect(store.at("c.v1000") == 1)
        let before = store.lastSequence
        try store.set(2, at: "c.v1000")
        #expect(store.at("c.v0") == 2)
        #expect(store.lastSequence - before == 1001, "one write per link: the echoes are suppressed")
        try store.set(3, at: "c.v0")
        #expect(store.at("c.v1000") == 3)
        #expect(registry.all.allSatisfy { $0.lastError == nil })
    }

    @Test func fanOutAndFanInWorkInAModelWithManyBindings() throws {
        // More bindings than `ModelBindings.indexedFrom`, so commits are routed by their first component.
        let (store, registry) = try makeBound([
            "m": #"{"src": 1, "parts": {"a": 1, "b": 2}, "sum": {}}"#, "n": "{}", "whole": "{}"
        ])
        for index in 0..<20 { try registry.bind(BindingSpec("m.src", "m.out\(index)")) }
        try registry.bind(BindingSpec("m.parts.a", "m.sum.a"))
        try registry.bind(BindingSpec("m.parts.b", "m.sum.b"))
        try registry.bind(BindingSpec("m.sum", "n.total"))
        // A binding from the whole model hears every change to it.
        try registry.bind(BindingSpec("m", "whole.copy"))
        try store.set(5, at: "m.src")
        for index in 0..<20 { #expect(store.at("m.out\(index)") == 5) }
        try store.set(10, at: "m.parts.a")
        #expect(store.at("n.total") == ["a": 10, "b": 2])
        #expect(store.at("whole.copy.out7") == 5 && store.at("whole.copy.sum.a") == 10)
        // One commit with changes under two first components reaches the bindings of both.
        let patch = bindingJSON(#"{"src": 6, "parts": {"b": 20}}"#)
        try store.mergePatch(patch, in: "m")
        #expect(store.at("m.out19") == 6)
        #expect(store.at("n.total") == ["a": 10, "b": 20])
        #expect(store.at("whole.copy.parts.b") == 20)
        #expect(registry.all.compactMap(\.lastError).isEmpty, "\(registry.all.compactMap(\.lastError))")
    }
}
