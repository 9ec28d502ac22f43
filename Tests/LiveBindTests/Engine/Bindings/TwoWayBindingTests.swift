import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Two-way bindings") struct TwoWayBindingTests {
    @Test func oneWayAppliesTheCurrentValueAndFollowsChanges() throws {
        let (store, registry) = try makeBound(["sensor": #"{"temperature": 20.5}"#, "panel": "{}"])
        let binding = try registry.bind(
            BindingSpec(
                "sensor.temperature", "panel.label", transform: TransformSpec("format", ["pattern": "%.1f °C"])))
        #expect(store.at("panel.label") == "20.5 °C")
        try store.set(21.25, at: "sensor.temperature")
        #expect(store.at("panel.label") == "21.2 °C")
        try store.set("changed by hand", at: "panel.label")
        #expect(store.at("sensor.temperature") == 21.25, "one-way never writes back")
        #expect(binding.fireCount == 2)
    }

    @Test func twoWayScaleWritesBackThroughTheReverse() throws {
        let (store, registry) = try makeBound(["settings": #"{"celsius": 20}"#, "panel": "{}"])
        try registry.bind(
            BindingSpec(
                "settings.celsius", "panel.fahrenheit", mode: .twoWay,
                transform: TransformSpec("scale", ["factor": 1.8, "offset": 32])))
        #expect(store.at("panel.fahrenheit") == 68)
        try store.set(212, at: "panel.fahrenheit")
        #expect(store.at("settings.celsius") == 100)
        try store.set(-40, at: "settings.celsius")
        #expect(store.at("panel.fahrenheit") == -40)
    }

    @Test func lossyTwoWayTransformDoesNotPingPong() throws {
        let (store, registry) = try makeBound(["a": #"{"x": 0.1}"#, "b": "{}"])
        let binding = try registry.bind(BindingSpec("a.x", "b.y", mode: .twoWay, transform: TransformSpec("scale", ["factor": 3])))
        let before = store.lastSequence
        try store.set(0.7, at: "a.x")
        // One commit for the write, one for the binding's forward write; its echo is not sent back.
        #expect(store.lastSequence == before + 2)
        #expect(store.at("a.x") == 0.7)
        #expect(binding.lastError == nil)
    }

    @Test func validationCoercesValuesWrittenToTheTargetAndSendsTheCoercedValueBack() throws {
        let (store, registry) = try makeBound(["settings": #"{"threshold": 50}"#, "panel": "{}"])
        try registry.bind(
            json: bindingJSON(
                #"""
                {"source": "settings.threshold", "target": "panel.threshold", "mode": "twoWay",
                 "validate": {"type": "number", "min": 0, "max": 100, "coerce": true}}
                """#))
        try store.set(150, at: "panel.threshold")
        #expect(store.at("panel.threshold") == 100)
        #expect(store.at("settings.threshold") == 100)
        try store.set(-5, at: "settings.threshold")
        #expect(store.at("panel.threshold") == 0, "forward writes are coerced too")
    }

    @Test func validationRejectsWithAMessageInsideEveryWriteToTheTarget() throws {
        let (store, registry) = try makeBound(["settings": #"{"mode": "eco"}"#, "panel": "{}"])
        let binding = try registry.bind(
            json: bindingJSON(
                #"""
                {"source": "settings.mode", "target": "panel.mode", "mode": "twoWay",
                 "validate": {"oneOf": ["eco", "comfort"], "message": "mode must be eco or comfort"}}
                """#))
        let revision = try store.snapshot("panel").revision
        #expect(throws: StoreError.validationFailed(path: try Path(dotted: "mode"), reason: "mode must be eco or comfort")) {
            try store.set("turbo", at: try Path(dotted: "mode"), in: "panel")
        }
        #expect(try store.snapshot("panel").revision == revision, "a refused write changes nothing")
        #expect(store.at("panel.mode") == "eco")
        // A write at an ancestor is checked for the bound member inside it, in every write path.
        #expect(throws: StoreError.self) { try store.put("panel", ["mode": "turbo"]) }
        #expect(throws: StoreError.self) { try store.mergePatch(["mode": "turbo"], in: "panel") }
        #expect(throws: StoreError.self) {
            try store.jsonPatch([["op": "replace", "path": "/mode", "value": "turbo"]], in: "panel")
        }
        #expect(try store.snapshot("panel").revision == revision)
        try store.set("comfort", at: try Path(dotted: "mode"), in: "panel")
        #expect(store.at("settings.mode") == "comfort")
        #expect(binding.lastError == nil)
        // Once the binding is gone, so is its rule.
        try registry.unbind(id: binding.id)
        try store.set("turbo", at: "panel.mode")
        #expect(store.at("panel.mode") == "turbo")
    }

    @Test func twoWayWithoutReverseIsRefused() throws {
        let (_, registry) = try makeBound(["a": #"{"x": 1}"#, "b": "{}"])
        #expect(throws: BindingError.self) {
            try registry.bind(BindingSpec("a.x", "b.y", mode: .twoWay, transform: TransformSpec("format", ["pattern": "%d"])))
        }
        do {
            try registry.bind(BindingSpec("a.x", "b.y", mode: .twoWay, transform: TransformSpec("count")))
            Issue.record("expected a refusal")
        } catch {
            #expect(error.description.contains("has no reverse"))
        }
        #expect(registry.all.isEmpty)
    }

    @Test func bindingsAcrossModelsAndInOneModel() throws {
        let (store, registry) = try makeBound(["m": #"{"on": true}"#])
        try registry.bind(BindingSpec("m.on", "m.off", mode: .twoWay, transform: TransformSpec("not")))
        #expect(store.at("m.off") == false)
        try store.set(true, at: "m.off")
        #expect(store.at("m.on") == false)
    }

    @Test func infoDescribesTheBindingAsJSON() throws {
        let (store, registry) = try makeBound(["a": #"{"x": 1}"#, "b": "{}"])
        let binding = try registry.bind(BindingSpec("a.x", "b.y", transform: TransformSpec("scale", ["factor": 2]), id: "double"))
        try store.set(2, at: "a.x")
        #expect(
            binding.json
                == bindingJSON(
                    #"""
                    {"id": "double", "source": "a.x", "target": "b.y", "mode": "oneWay",
                     "transform": {"name": "scale", "factor": 2}, "enabled": true, "fireCount": 2, "lastError": null}
                    """#))
        #expect(registry.binding(id: "double") === binding)
        #expect(throws: BindingError.duplicateID("double")) { try registry.bind(BindingSpec("a.x", "b.z", id: "double")) }
        try registry.unbind(id: "double")
        #expect(throws: BindingError.bindingNotFound("double")) { try registry.unbind(id: "double") }
        try store.set(5, at: "a.x")
        #expect(store.at("b.y") == 4, "an unbound binding stops")
    }

    @Test func transformFailuresAreRecordedAsTheLastError() throws {
        let (store, registry) = try makeBound(["a": #"{"x": 1}"#, "b": "{}"])
        let binding = try registry.bind(BindingSpec("a.x", "b.y", transform: TransformSpec("not")))
        #expect(binding.lastError == .transformFailed(transform: "not", reason: "expected a Boolean, found number"))
        try store.set(false, at: "a.x")
        #expect(store.at("b.y") == true)
    }
}
