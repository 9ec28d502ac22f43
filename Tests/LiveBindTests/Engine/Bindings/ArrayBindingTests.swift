import DequeModule
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Array bindings") struct ArrayBindingTests {
    /// Applies a random insert/remove/replace/move to the store's source array and to a plain Swift array.
    static func randomEdit(_ store: Store, _ plain: inout [Int], _ random: inout SplitMix, counter: inout Int) throws {
        let array = try Path(dotted: "items")
        counter += 1
        switch (plain.isEmpty ? 0 : Int.random(in: 0..<5, using: &random)) {
        case 0, 1:
            let index = Int.random(in: 0...plain.count, using: &random)
            plain.insert(counter, at: index)
            try store.insert(.int(counter), at: index, in: array, of: "source")
        case 2:
            let index = Int.random(in: 0..<plain.count, using: &random)
            plain.remove(at: index)
            try store.remove(at: array.appending(String(index)), in: "source")
        case 3:
            let index = Int.random(in: 0..<plain.count, using: &random)
            plain[index] = counter
            try store.replace(at: index, in: array, of: "source", with: .int(counter))
        default:
            let from = Int.random(in: 0..<plain.count, using: &random), to = Int.random(in: 0..<plain.count, using: &random)
            plain.insert(plain.remove(at: from), at: to)
            try store.move(from: from, to: to, in: array, of: "source")
        }
    }

    @Test(arguments: [1, 2, 3, 42])
    func mirrorFollowsRandomEditsGranularly(seed: UInt64) throws {
        let (store, registry) = try makeBound(["source": #"{"items": [1, 2, 3]}"#, "target": "{}"])
        try registry.bind(
            json: bindingJSON(
                #"""
                {"source": "source.items", "target": "target.items", "each": true, "transform": {"name": "scale", "factor": 10}}
                """#))
        let kinds = Collected<Change.Kind>()
        let observation = store.observe(try Path(dotted: "items"), in: "target") { kinds.append($0.kind) }
        defer { observation.cancel() }
        var plain = [1, 2, 3], random = SplitMix(seed: seed), counter = 100
        for step in 0..<300 {
            try Self.randomEdit(store, &plain, &random, counter: &counter)
            #expect(store.at("target.items") == .array(Deque(plain.map { JSON.int($0 * 10) })), "step \(step)")
        }
        #expect(!kinds.all.contains(.set), "never rebuilt wholesale: \(Set(kinds.all.map(\.rawValue)))")
        #expect(kinds.all.count <= 300 && kinds.all.count > 250, "one target change per source change")
    }

    @Test func identityMirrorWithoutTransformIsGranularToo() throws {
        let (store, registry) = try makeBound(["source": #"{"items": []}"#, "target": "{}"])
        try registry.bind(BindingSpec("source.items", "target.copy"))
        let kinds = Collected<Change.Kind>()
        let observation = store.observe(try Path(dotted: "copy"), in: "target") { kinds.append($0.kind) }
        defer { observation.cancel() }
        var plain: [Int] = [], random = SplitMix(seed: 7), counter = 0
        for _ in 0..<200 { try Self.randomEdit(store, &plain, &random, counter: &counter) }
        #expect(store.at("target.copy") == .array(Deque(plain.map { JSON.int($0) })))
        #expect(!kinds.all.contains(.set))
    }

    @Test func changeInsideAnElementReplacesThatElement() throws {
        let (store, registry) = try makeBound([
            "sensor": #"{"readings": [{"id": 1, "value": 1.5}, {"id": 2, "value": 2.5}]}"#, "panel": "{}"
        ])
        try registry.bind(BindingSpec("sensor.readings", "panel.readings"))
        let changes = Collected<Change>()
        let observation = store.observe(try Path(dotted: "readings"), in: "panel") { changes.append($0) }
        defer { observation.cancel() }
        try store.set(9.5, at: "sensor.readings.1.value")
        #expect(store.at("panel.readings.1.value") == 9.5)
        #expect(changes.all.map(\.kind) == [.replace])
        #expect(changes.all.first?.index == 1)
    }

    @Test func wholeArraySetAndTargetDriftAreResynced() throws {
        let (store, registry) = try makeBound(["source": #"{"items": [1, 2]}"#, "target": "{}"])
        try registry.bind(BindingSpec("source.items", "target.items"))
        try store.set([5, 6, 7], at: "source.items")
        #expect(store.at("target.items") == [5, 6, 7])
        // Someone shortens the target behind the binding's back: the next source change resyncs it whole.
        try store.set([], at: "target.items")
        try store.remove(at: try Path(dotted: "items.2"), in: "source")
        #expect(store.at("target.items") == [5, 6])
    }
}
