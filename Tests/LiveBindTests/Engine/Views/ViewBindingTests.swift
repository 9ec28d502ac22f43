import DequeModule
import Testing
@testable import LiveBind
@testable import LiveBindEngine

/// A view as a binding's transform (`{"name": "view", "where": …, "order": …, "limit": …}`): the target
/// array holds the shown rows of the source array after every write, written row by row, and bindings
/// from the target (a count, a sum) follow it like any array.
@Suite("View bindings") struct ViewBindingTests {
    static func order(_ random: inout SplitMix, id: Int) -> JSON {
        [
            "id": .int(id), "status": ["open", "held", "done"].randomElement(using: &random)!,
            "time": .int(Int.random(in: 0..<20, using: &random)), "total": .int(Int.random(in: 1..<9, using: &random))
        ]
    }

    @Test(arguments: 0..<12) func theTargetHoldsTheShownRowsAfterEveryWrite(seed: Int) throws {
        var random = SplitMix(seed: UInt64(seed) &+ 99)
        var nextID = 0
        let initial: [JSON] = (0..<Int.random(in: 0..<10, using: &random)).map { _ in
            nextID += 1
            return Self.order(&random, id: nextID)
        }
        let (store, registry) = try makeBound(["orders": "{}", "dash": "{}"])
        try store.set(.array(Deque(initial)), at: "orders.items")
        let view = try registry.bind(
            json: bindingJSON(
                #"""
                {"source": "orders.items", "target": "dash.open",
                 "transform": {"name": "view", "where": "status:in:(open,held)", "order": "-time", "offset": 1, "limit": 4}}
                """#))
        try registry.bind(json: bindingJSON(#"{"source": "dash.open", "target": "dash.shown", "transform": "count"}"#))
        try registry.bind(
            json: bindingJSON(#"{"source": "dash.open", "target": "dash.total", "transform": {"name": "sum", "of": "total"}}"#))
        let query = try #require(
            registry.transforms.make(
                TransformSpec(
                    "view",
                    [
                        "where": "status:in:(open,held)", "order": "-time",
                        "offset": 1, "limit": 4
                    ])
            ).view)
        let sets = Collected<Change>()
        let watch = store.observe(Path(["open"]), in: "dash") { change in if change.kind == .set { sets.append(change) } }
        defer { watch.cancel() }
        let items = Path(["items"])
        for step in 0..<120 {
            let count = (try store.value(of: "orders", at: items)).arrayValue?.count ?? 0
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                nextID += 1
                try store.insert(Self.order(&random, id: nextID), at: Int.random(in: 0...count, using: &random), in: items, of: "orders")
            case 3 where count > 0:
                try store.remove(at: items.appending(String(Int.random(in: 0..<count, using: &random))), in: "orders")
            case 4 where count > 1:
                try store.move(
                    from: Int.random(in: 0..<count, using: &random), to: Int.random(in: 0..<count, using: &random), in: items, of: "orders")
            case 5..<9 where count > 0:
                let field = ["status", "time", "total"].randomElement(using: &random)!
                let value: JSON =
                    field == "status"
                    ? ["open", "held", "done"].randomElement(using: &random)! : .int(Int.random(in: 0..<20, using: &random))
                try store.set(value, at: items.appending(String(Int.random(in: 0..<count, using: &random))).appending(field), in: "orders")
            default:
                nextID += 1
                try store.append(Self.order(&random, id: nextID), to: items, in: "orders")
            }
            let content = Array((try store.value(of: "orders", at: items)).arrayValue ?? [])
            let expected = query.arrangedByFullSort(content).rows
            #expect(store.at("dash.open") == .array(Deque(expected)), "seed \(seed), step \(step)")
            #expect(store.at("dash.shown") == .int(expected.count), "seed \(seed), step \(step)")
            let total = expected.reduce(0) { $0 + ($1["total"]?.doubleValue.map(Int.init) ?? 0) }
            #expect(store.at("dash.total") == .int(total), "seed \(seed), step \(step)")
            if store.at("dash.open") != .array(Deque(expected)) { return }
        }
        #expect(view.lastError == nil)
        // Row by row: the whole target array is never set again after it was made.
        #expect(sets.all.isEmpty, "the target was set whole \(sets.all.count) times")
    }

    @Test func aViewThatIsNoViewIsRefusedNamingItsPart() throws {
        let (_, registry) = try makeBound(["orders": #"{"items": []}"#, "dash": "{}"])
        let refusal = #expect(throws: BindingError.self) {
            try registry.bind(
                json: bindingJSON(
                    #"{"source": "orders.items", "target": "dash.v", "transform": {"name": "view", "where": "status:like:x"}}"#))
        }
        #expect(refusal.map { "\($0)".contains("parameter 'where' 'like' is no operator") } == true, "\(String(describing: refusal))")
        #expect(throws: BindingError.self) {
            try registry.bind(
                json: bindingJSON(#"{"source": "orders.items", "target": "dash.v", "transform": {"name": "view", "limit": "3"}}"#))
        }
        #expect(throws: BindingError.self) {
            try registry.bind(
                json: bindingJSON(#"{"source": "orders.items", "target": "dash.v", "mode": "twoWay", "transform": {"name": "view"}}"#))
        }
    }
}
