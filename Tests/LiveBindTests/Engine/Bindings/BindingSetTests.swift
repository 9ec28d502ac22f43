import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Binding sets") struct BindingSetTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures"))
        return Array(try Data(contentsOf: url))
    }

    @Test func definitionFileCreatesModelsAndBindings() throws {
        let store = Store()
        let registry = BindingRegistry(store: store)
        let set = try BindingSet(definition: try Self.fixture("bindings-demo"), registry: registry)
        #expect(set.bindings.count == 7)
        #expect(store.at("panel.label") == "20.5 °C")
        #expect(store.at("panel.threshold") == 25)
        #expect(store.at("panel.count") == 3)
        #expect(store.at("panel.average") == 19.833333333333332)
        #expect(store.at("panel.hot") == "ok")
        #expect(store.at("panel.readings") == ["18.0", "21.5", "20.0"])
        #expect(store.at("panel.unitName") == "Celsius")
        try store.set("Fahrenheit", at: "panel.unitName")
        #expect(store.at("settings.unit") == "F")
        try store.set(99, at: "panel.threshold")
        #expect(store.at("settings.threshold") == 50)
        try store.append(30, to: try Path(dotted: "readings"), in: "sensor")
        #expect(store.at("panel.count") == 4 && store.at("panel.readings.3") == "30.0")
    }

    @Test func badEntriesAreAllReportedWithPositionsAndNothingIsApplied() throws {
        let store = Store()
        try store.put("panel", ["keep": true])
        let registry = BindingRegistry(store: store)
        let bytes = try Self.fixture("bindings-bad")
        do {
            _ = try BindingSet(definition: bytes, registry: registry)
            Issue.record("expected the definition to be refused")
        } catch {
            guard case .invalidDefinition(let issues) = error else { Issue.record("wrong error \(error)"); return }
            let positions = Set(issues.map(\.position))
            for expected in [
                "models.broken", "bindings[1].target", "bindings[2].transform", "bindings[3].transform.pattern",
                "bindings[4].mode", "bindings[5].source", "bindings[6].mode", "bindings[7]"
            ] {
                #expect(positions.contains(expected), "missing \(expected) in \(issues)")
            }
            #expect(!positions.contains("bindings[0]"), "a valid entry is not reported")
            #expect(error.description.contains("nothing was applied"))
        }
        #expect(registry.all.isEmpty)
        #expect(store.modelNames().map(\.name) == ["panel"])
        #expect(try store.value(of: "panel") == ["keep": true])
    }

    /// Found writing docs/Bindings.md: a model the store refused (past its size limit) left the models
    /// put before it in the store, though the error said nothing was applied.
    @Test func aModelTheStoreRefusesUndoesTheModelsBeforeIt() throws {
        var limits = StoreLimits()
        limits.maxModelBytes = 100
        let store = Store(limits: limits)
        try store.put("kept", ["v": 1])
        let registry = BindingRegistry(store: store)
        let definition: JSON = [
            "models": ["kept": ["v": 2], "small": ["v": 3], "big": ["text": .string(String(repeating: "x", count: 200))]],
            "bindings": [["source": "small.v", "target": "kept.w"]]
        ]
        #expect(throws: BindingError.self) { try BindingSet(definition: definition, registry: registry) }
        #expect(try store.value(of: "kept") == ["v": 1])
        #expect(store.modelNames().map(\.name) == ["kept"])
        #expect(registry.all.isEmpty)
    }

    @Test func specErrorsNameTheMember() throws {
        #expect(throws: BindingError.invalidSpec(position: "target", reason: "required: a string \"model.path\"")) {
            try BindingSpec(json: ["source": "a.b"])
        }
        let spec = try BindingSpec(json: bindingJSON(#"{"source": "a.b", "target": "c.d", "transform": "count"}"#))
        #expect(spec.mode == .oneWay && spec.transform == TransformSpec("count") && spec.target.description == "c.d")
    }

    @Test func disabledBindingsDoNotFireAndCatchUpWhenEnabled() throws {
        let (store, registry) = try makeBound(["sensor": #"{"temperature": 20, "readings": [1, 2]}"#, "panel": "{}"])
        let set = try BindingSet(
            [
                BindingSpec("sensor.temperature", "panel.temperature"),
                BindingSpec("sensor.readings", "panel.sum", transform: TransformSpec("sum")),
                BindingSpec("sensor.readings", "panel.readings")
            ], registry: registry)
        #expect(store.at("panel.sum") == 3)
        set.disable()
        #expect(!set.isEnabled)
        let fired = set.bindings.map(\.fireCount)
        try store.set(30, at: "sensor.temperature")
        try store.append(10, to: try Path(dotted: "readings"), in: "sensor")
        try store.remove(at: try Path(dotted: "readings.0"), in: "sensor")
        #expect(store.at("panel.temperature") == 20 && store.at("panel.sum") == 3 && store.at("panel.readings") == [1, 2])
        #expect(set.bindings.map(\.fireCount) == fired)
        set.enable()
        #expect(store.at("panel.temperature") == 30 && store.at("panel.sum") == 12 && store.at("panel.readings") == [2, 10])
        try store.append(5, to: try Path(dotted: "readings"), in: "sensor")
        #expect(store.at("panel.sum") == 17 && store.at("panel.readings") == [2, 10, 5])
        try registry.setEnabled(id: set.bindings[0].id, false)
        #expect(set.bindings[0].info.enabled == false)
        set.unbind()
        set.unbind()
        #expect(registry.all.isEmpty)
        try store.set(40, at: "sensor.temperature")
        #expect(store.at("panel.temperature") == 30)
    }

    @Test func setFromCodeIsAllOrNothingToo() throws {
        let (_, registry) = try makeBound(["a": #"{"v": 1}"#, "b": "{}"])
        #expect(throws: BindingError.self) {
            try BindingSet([BindingSpec("a.v", "b.v"), BindingSpec("b.v", "a.v")], registry: registry)
        }
        #expect(registry.all.isEmpty)
    }
}
