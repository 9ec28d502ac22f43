import Foundation
import LiveBind
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
        try bindings.bind(json: ["source": "sensor.temperature", "target": "panel.label",
                                 "transform": ["name": "format", "pattern": "%.1f °C"]])

        let temperature = try Path(dotted: "temperature")
        let observation = store.observe(temperature, in: "sensor") { change in
            print("sensor.\(change.path.dotted) is now \(change.value ?? .null)")
        }
        try store.set(21.5, at: temperature, in: "sensor")
        let label = try store.value(of: "panel", at: Path(dotted: "label"))   // "21.5 °C"

        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0               // any free port (the default is 8080)
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
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)

        let tested = try #require(Self.lines(of: source, from: "// README-BEGIN embedding", to: "// README-END embedding"))
        let marker = "<!-- embedding example: compiled and run by Tests/LiveBindTests/ReadmeTests.swift -->"
        let afterMarker = try #require(readme.range(of: marker)).upperBound
        let shown = try #require(Self.lines(of: String(readme[afterMarker...]), from: "```swift", to: "```"))
        #expect(Self.dedented(shown) == ["import LiveBind", ""] + Self.dedented(tested))
    }

    /// The lines strictly between the first line containing `start` and the next containing `end`.
    static func lines(of text: String, from start: String, to end: String) -> [String]? {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = all.firstIndex(where: { $0.contains(start) }),
              let last = all[(first + 1)...].firstIndex(where: { $0.contains(end) }) else { return nil }
        return Array(all[(first + 1)..<last])
    }

    /// The lines with their common leading indentation removed.
    static func dedented(_ lines: [String]) -> [String] {
        let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }
            .map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
        return lines.map { $0.allSatisfy(\.isWhitespace) ? "" : String($0.dropFirst(indent)) }
    }
}
