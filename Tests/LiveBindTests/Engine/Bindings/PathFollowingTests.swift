import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// One-way bindings between key paths through a scalar transform follow their source by path
/// (`Binding+Following.swift`): these pin down that the fast path keeps the feed's behaviour.
@Suite("Bindings that follow their source by path") struct PathFollowingTests {
    /// Events in the order observers heard them, from any thread.
    private final class Heard: Sendable {
        private let events = OrderedMutex<[String]>([])
        func append(_ event: String) { events.withLock { $0.append(event) } }
        var all: [String] { events.withLock { $0 } }
    }

    private func scale(_ factor: Double) -> TransformSpec { TransformSpec("scale", ["factor": .double(factor)]) }

    @Test func aOneWayScalarBindingFollowsByPathAndStartsNoStoreWideFeed() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        let binding = try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        #expect(binding.followsPath)
        #expect(store.withState { $0.commitObservers.isEmpty }, "no Commit is built for a hop")
        #expect(store.at("m.b") == 2)
        try store.set(5, at: "m.a")
        #expect(store.at("m.b") == 10)
        #expect(binding.fireCount == 2)
        #expect(binding.lastError == nil)
    }

    @Test func bindingsThatNeedTheFeedStillGetIt() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "list": [1, 2]}"#])
        let twoWay = try registry.bind(BindingSpec("m.a", "m.b", mode: .twoWay, transform: scale(2)))
        let mirror = try registry.bind(BindingSpec("m.list", "m.copy"))
        #expect(!twoWay.followsPath && !mirror.followsPath)
        #expect(store.withState { $0.commitObservers.count } == 1)
        try store.set(4, at: "m.b")
        #expect(store.at("m.a") == 2)
        try store.append(3, to: .root.appending("list"), in: "m")
        #expect(store.at("m.copy") == [1, 2, 3])
    }

    @Test func aDisabledBindingIgnoresHopsAndCatchesUpWhenEnabled() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        let binding = try registry.bind(BindingSpec("m.a", "m.b", transform: scale(3), id: "x"))
        try registry.setEnabled(id: "x", false)
        try store.set(2, at: "m.a")
        try store.set(4, at: "m.a")
        #expect(store.at("m.b") == 3, "unchanged while disabled")
        #expect(binding.fireCount == 1)
        try registry.setEnabled(id: "x", true)
        #expect(store.at("m.b") == 12)
        try store.set(5, at: "m.a")
        #expect(store.at("m.b") == 15)
    }

    @Test func aTransformThatThrowsIsRecordedAndLeavesTheTarget() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        let binding = try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        let sequence = store.lastSequence
        try store.set("not a number", at: "m.a")
        #expect(store.at("m.b") == 2)
        #expect(store.lastSequence == sequence + 1, "only the source write committed")
        guard case .transformFailed(let name, _)? = binding.lastError else {
            Issue.record("expected transformFailed, got \(String(describing: binding.lastError))")
            return
        }
        #expect(name == "scale")
        try store.set(7, at: "m.a")
        #expect(store.at("m.b") == 14)
    }

    @Test func theBindingsValidationRefusesAndCoercesInsideTheHop() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0, "c": 0}"#])
        let refusing = try registry.bind(
            BindingSpec(
                "m.a", "m.b", transform: scale(10),
                validation: try Validation(json: ["max": 50])))
        let clamping = try registry.bind(
            BindingSpec(
                "m.a", "m.c", transform: scale(10),
                validation: try Validation(json: ["max": 50, "coerce": true])))
        try store.set(9, at: "m.a")
        #expect(store.at("m.b") == 10, "90 is refused; the target keeps the last valid value")
        #expect(store.at("m.c") == 50)
        guard case .store(.validationFailed)? = refusing.lastError else {
            Issue.record("expected validationFailed, got \(String(describing: refusing.lastError))")
            return
        }
        #expect(clamping.lastError == nil)
    }

    @Test func aRuleTheStoreHoldsRefusesTheHopsWrite() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        let binding = try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        _ = store.addRule(Validation { $0 == 100 ? .reject("not 100") : .accept }, at: .root.appending("b"), in: "m")
        try store.set(50, at: "m.a")
        #expect(store.at("m.b") == 2)
        guard case .store(.validationFailed(_, let reason))? = binding.lastError else {
            Issue.record("expected validationFailed, got \(String(describing: binding.lastError))")
            return
        }
        #expect(reason == "not 100")
    }

    @Test func observersHearTheSourceThenTheTargetInCommitOrder() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        let heard = Heard()
        let first = store.observe(.root.appending("b"), in: "m") { heard.append("first \($0.path.dotted)=\($0.value!)") }
        let source = store.observe(.root.appending("a"), in: "m") { heard.append("source \($0.path.dotted)=\($0.value!)") }
        let second = store.observe(.root.appending("b"), in: "m") { heard.append("second \($0.path.dotted)=\($0.value!)") }
        let commits = store.observeAll { commit in
            guard case .changes(let changes) = commit.kind else { return }
            heard.append("commit \(commit.sequence) " + changes.map { $0.path.dotted }.joined(separator: ","))
        }
        let start = store.lastSequence
        try store.set(3, at: "m.a")
        #expect(
            heard.all == [
                "source a=3", "commit \(start + 1) a",
                "first b=6", "second b=6", "commit \(start + 2) b"
            ])
        withExtendedLifetime([first, source, second, commits]) {}
    }

    @Test func aChangeAboveTheSourceIsSentWholeAndAMissingSourceIsReported() throws {
        let (store, registry) = try makeBound(["m": #"{"s": {"a": 1}, "b": 0}"#])
        let binding = try registry.bind(BindingSpec("m.s.a", "m.b", transform: scale(2)))
        try store.set(["a": 4], at: "m.s")
        #expect(store.at("m.b") == 8)
        try store.put("m", ["s": ["a": 5], "b": 0])
        #expect(store.at("m.b") == 10)
        try store.remove(at: .root.appending("s").appending("a"), in: "m")
        #expect(store.at("m.b") == 10)
        guard case .store(.pathNotFound)? = binding.lastError else {
            Issue.record("expected pathNotFound, got \(String(describing: binding.lastError))")
            return
        }
    }

    @Test func aWriteThatSetsTheSourceTwiceEndsWithItsLastValue() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0}"#])
        try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        try store.write("m") { (editor) throws(StoreError) in
            try editor.set(2, at: .root.appending("a"))
            try editor.set(3, at: .root.appending("a"))
        }
        #expect(store.at("m.b") == 6)
    }

    @Test func hopsMadeFromInsideAnObserverAreDeliveredAfterIt() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0, "go": 0}"#])
        try registry.bind(BindingSpec("m.a", "m.b", transform: scale(2)))
        let heard = Heard()
        let trigger = store.observe(.root.appending("go"), in: "m") { change in
            heard.append("go")
            _ = try? store.set(change.value!, at: "m.a")
            heard.append("go done, b=\(store.at("m.b")!)")
        }
        let target = store.observe(.root.appending("b"), in: "m") { heard.append("b=\($0.value!)") }
        try store.set(21, at: "m.go")
        #expect(heard.all == ["go", "go done, b=2", "b=42"])
        withExtendedLifetime([trigger, target]) {}
    }

    @Test func unbindingAndReleasingTheRegistryStopFollowingAndLeakNothing() throws {
        let store = Store()
        try store.put("m", ["a": 1, "b": 0, "c": 0])
        weak var weakRegistry: BindingRegistry?
        weak var weakBinding: Binding?
        do {
            let registry = BindingRegistry(store: store)
            weakRegistry = registry
            let kept = try registry.bind(BindingSpec("m.a", "m.b", transform: TransformSpec("scale", ["factor": 2])))
            weakBinding = kept
            let removed = try registry.bind(BindingSpec("m.a", "m.c", transform: TransformSpec("scale", ["factor": 3])))
            try registry.unbind(id: removed.id)
            try store.set(2, at: "m.a")
            #expect(store.at("m.b") == 4)
            #expect(store.at("m.c") == 3, "an unbound binding no longer follows")
        }
        #expect(weakRegistry == nil)
        #expect(weakBinding == nil, "the store's observation no longer holds the binding")
        try store.set(5, at: "m.a")
        #expect(store.at("m.b") == 4, "a released registry's bindings stop")
        #expect(store.withState { $0.lookUp("m")?.observers.isEmpty } == true)
    }
}

extension PathFollowingTests {
    @Test func aChainLongerThanTheNestingLimitIsDeliveredInOrder() throws {
        let links = 3 * DeliveryState.maxNesting
        let (store, registry) = try makeBound(["c": chainModel(links + 1)])
        for index in 0..<links {
            try registry.bind(BindingSpec("c.v\(index)", "c.v\(index + 1)", transform: TransformSpec("scale", ["offset": 1])))
        }
        let heard = Heard()
        let tokens = (1...links).map { index in
            store.observe(.root.appending("v\(index)"), in: "c") { heard.append("v\(index)=\($0.value!)") }
        }
        try store.set(100, at: "c.v0")
        #expect(heard.all == (1...links).map { "v\($0)=\(100 + $0)" })
        #expect(store.at("c.v\(links)") == .int(100 + links))
        #expect(registry.all.allSatisfy { $0.lastError == nil })
        withExtendedLifetime(tokens) {}
    }

    @Test func aWriteByTheTargetsObserverComesAfterTheHop() throws {
        let (store, registry) = try makeBound(["m": #"{"a": 1, "b": 0, "log": 0}"#])
        try registry.bind(BindingSpec("m.a", "m.b", transform: TransformSpec("scale", ["factor": 2])))
        let heard = Heard()
        let target = store.observe(.root.appending("b"), in: "m") { change in
            heard.append("b=\(change.value!)")
            _ = try? store.set(change.value!, at: "m.log")
            heard.append("b done")
        }
        let log = store.observe(.root.appending("log"), in: "m") { heard.append("log=\($0.value!)") }
        try store.set(4, at: "m.a")
        #expect(heard.all == ["b=8", "b done", "log=8"])
        withExtendedLifetime([target, log]) {}
    }
}
