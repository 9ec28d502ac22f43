import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

// `Thermostat` is declared in ObservableFixtures.swift.

@Suite("Observable bindings") struct ObservableBindingTests {
    @MainActor @Test func storeAndObservablePropertyStayInSyncBothWays() async throws {
        let (store, registry) = try makeBound(["settings": #"{"target": 21.5, "mode": "eco"}"#])
        let thermostat = Thermostat()
        let binding = try registry.bind("settings.target", observable: thermostat, \.target)
        try registry.bind("settings.mode", observable: thermostat, \.mode)
        #expect(await eventually { thermostat.target == 21.5 && thermostat.mode == "eco" })
        try store.set(19, at: "settings.target")
        #expect(await eventually { thermostat.target == 19 })
        let before = store.lastSequence
        thermostat.target = 23.5
        #expect(await eventually { store.at("settings.target") == 23.5 })
        thermostat.mode = "comfort"
        #expect(await eventually { store.at("settings.mode") == "comfort" })
        // Settle, then check nothing went round in a loop: exactly the two writes made by the object.
        try await Task.sleep(for: .milliseconds(50))
        #expect(store.lastSequence == before + 2)
        #expect(thermostat.target == 23.5)
        #expect(binding.lastError == nil)
    }

    @MainActor @Test func twoWayObservableWithTransform() async throws {
        let (store, registry) = try makeBound(["settings": #"{"celsius": 20}"#])
        let thermostat = Thermostat()
        try registry.bind(
            "settings.celsius", observable: thermostat, \.target, transform: TransformSpec("scale", ["factor": 1.8, "offset": 32]))
        #expect(await eventually { thermostat.target == 68 })
        thermostat.target = 212
        #expect(await eventually { store.at("settings.celsius") == 100 })
    }

    @MainActor @Test func observableBindingEndsWhenTheObjectIsReleased() async throws {
        let (store, registry) = try makeBound(["settings": #"{"target": 21.5}"#])
        weak var weakThermostat: Thermostat?
        do {
            let thermostat = Thermostat()
            weakThermostat = thermostat
            try registry.bind("settings.target", observable: thermostat, \.target)
            #expect(await eventually { thermostat.target == 21.5 })
        }
        // Tasks that were queued for the object may hold it briefly; it must go away.
        #expect(await eventually { weakThermostat == nil })
        try store.set(10, at: "settings.target")
        #expect(registry.all.isEmpty)
    }
}
