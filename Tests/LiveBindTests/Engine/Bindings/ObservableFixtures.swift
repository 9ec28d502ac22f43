import Observation

/// An app-style model type for the `@Observable` binding tests.
@Observable @MainActor final class Thermostat {
    var target = 0.0
    var mode = "off"
}
