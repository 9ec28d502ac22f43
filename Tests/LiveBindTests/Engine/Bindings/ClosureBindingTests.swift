import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Closure and object bindings") struct ClosureBindingTests {
    struct Reading: Decodable, Equatable, Sendable {
        var id: Int
        var value: Double
    }

    final class Gauge {
        var temperature = 0.0
        var label = ""
    }

    @Test func typedClosureReceivesTheCurrentValueAndEveryChange() throws {
        let (store, registry) = try makeBound([
            "sensor": #"{"temperature": 20.5, "name": "probe", "on": true, "readings": [{"id": 1, "value": 1.5}]}"#
        ])
        let temperatures = Collected<Double>(), names = Collected<String>(), flags = Collected<Bool>()
        let readings = Collected<[Reading]>()
        try registry.observe("sensor.temperature", as: Double.self) { temperatures.append($0) }
        try registry.observe("sensor.name", as: String.self) { names.append($0) }
        try registry.observe("sensor.on") { (flag: Bool) in flags.append(flag) }
        try registry.observe("sensor.readings", as: [Reading].self) { readings.append($0) }
        try store.set(21, at: "sensor.temperature")
        try store.put("sensor", bindingJSON(#"{"temperature": 22.5, "name": "probe 2", "on": false, "readings": []}"#))
        try store.append(["id": 7, "value": 3.25], to: try Path(dotted: "readings"), in: "sensor")
        #expect(temperatures.all == [20.5, 21, 22.5])
        #expect(names.all == ["probe", "probe 2"])
        #expect(flags.all == [true, false])
        #expect(readings.all == [[Reading(id: 1, value: 1.5)], [], [Reading(id: 7, value: 3.25)]])
    }

    @Test func valuesThatDoNotDecodeAreReportedNotDelivered() throws {
        let (store, registry) = try makeBound(["sensor": #"{"count": 1}"#])
        let counts = Collected<Int>()
        let binding = try registry.observe("sensor.count", as: Int.self) { counts.append($0) }
        try store.set("many", at: "sensor.count")
        #expect(counts.all == [1])
        guard case .decodingFailed(let path, let type, _)? = binding.lastError else {
            Issue.record("expected a decoding error, got \(String(describing: binding.lastError))")
            return
        }
        #expect(path == "sensor.count" && type == "Int")
    }

    @Test func objectPropertyFollowsTheStoreThroughAKeyPath() throws {
        let (store, registry) = try makeBound(["sensor": #"{"temperature": 20.5}"#])
        let gauge = Gauge()
        try registry.bind("sensor.temperature", to: gauge, \.temperature)
        try registry.bind("sensor.temperature", to: gauge, \.label, transform: TransformSpec("format", ["pattern": "%.0f°"]))
        #expect(gauge.temperature == 20.5 && gauge.label == "20°")
        try store.set(30, at: "sensor.temperature")
        #expect(gauge.temperature == 30 && gauge.label == "30°")
    }

    @Test func objectBindingEndsByItselfWhenTheObjectIsReleased() throws {
        let (store, registry) = try makeBound(["sensor": #"{"temperature": 20.5}"#])
        weak var weakGauge: Gauge?
        var binding: Binding?
        do {
            let gauge = Gauge()
            weakGauge = gauge
            binding = try registry.bind("sensor.temperature", to: gauge, \.temperature)
            #expect(gauge.temperature == 20.5)
        }
        #expect(weakGauge == nil, "the binding does not keep the object alive")
        #expect(binding?.isAlive == false)
        try store.set(25, at: "sensor.temperature")
        #expect(registry.all.isEmpty, "the binding removed itself")
        #expect(binding?.isRemoved == true)
    }

    @Test func releasedRegistryAndBindingsLeakNothing() throws {
        let store = Store()
        try store.put("sensor", ["temperature": 1])
        weak var weakRegistry: BindingRegistry?
        weak var weakBinding: Binding?
        do {
            let registry = BindingRegistry(store: store)
            weakRegistry = registry
            weakBinding = try registry.observe("sensor.temperature", as: Double.self) { _ in }
            try store.set(2, at: "sensor.temperature")
        }
        #expect(weakRegistry == nil)
        #expect(weakBinding == nil)
        try store.set(3, at: "sensor.temperature")
    }

    @Test func unboundClosureIsReleased() throws {
        final class Token: Sendable {}
        let (store, registry) = try makeBound(["sensor": #"{"temperature": 1}"#])
        weak var weakToken: Token?
        let id: String
        do {
            let token = Token()
            weakToken = token
            id = try registry.observe("sensor.temperature", as: Double.self) { _ in _ = token }.id
        }
        #expect(weakToken != nil)
        try registry.unbind(id: id)
        #expect(weakToken == nil, "unbind releases the closure and what it captured")
        try store.set(2, at: "sensor.temperature")
    }
}
