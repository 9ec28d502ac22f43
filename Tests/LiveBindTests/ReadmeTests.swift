import Foundation
import LiveBind
@testable import LiveBindEngine
import Testing

/// The README's "Embedding" example is the code between the markers below: this suite runs it, and checks
/// that the README shows exactly that code, so the documentation cannot drift from what compiles.
@Suite("README") struct ReadmeTests {
    @Test func embeddingExampleRuns() throws {
        // README-BEGIN embedding
        let store = Store()
        try store.put("sensor", ["temperature": 20.5, "readings": []])
        try store.put("panel", [:])
        let bindings = BindingRegistry(store: store)
        try bindings.bind(json: [
            "source": "sensor.temperature", "target": "panel.label",
            "transform": ["name": "format", "pattern": "%.1f °C"]
        ])

        let temperature = try Path(dotted: "temperature")
        let observation = store.observe(temperature, in: "sensor") { change in
            print("sensor.\(change.path.dotted) is now \(change.value ?? .null)")
        }
        try store.set(21.5, at: temperature, in: "sensor")
        let label = try store.value(of: "panel", at: Path(dotted: "label"))  // "21.5 °C"

        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0  // any free port (the default is 8080)
        let server = LiveBindServer(store: store, bindings: bindings, configuration: configuration)
        try server.start()
        let port = server.port
        print("dashboard: http://127.0.0.1:\(port)/")
        // … the app runs; browsers and curl read, write and watch the same models …
        server.stop()
        observation.cancel()
        // README-END embedding
        #expect(label == "21.5 °C")
        #expect(port > 0)
    }

    @Test func readmeShowsTheTestedExample() throws {
        let readme = try String(contentsOf: repositoryRoot().appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = try #require(
            DocumentedExample.shownAndTested(
                document: readme, marker: "<!-- embedding example: compiled and run by Tests/LiveBindTests/ReadmeTests.swift -->",
                source: source, begin: "// README-BEGIN embedding", end: "// README-END embedding"))
        #expect(example.shown == example.tested)
    }
}
