import OrderedCollections
import DequeModule
import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// docs/Bindings.md cannot drift from the code: every built-in transform is documented, every binding entry
/// it shows (in `json` blocks and in `curl` bodies sent to `POST /bindings`) parses and binds without error,
/// every definition file it shows loads, and its Swift example is the code below, which runs.
@Suite("Bindings in the docs") struct BindingsDocTests {
    static let root = repositoryRoot()

    static func document() throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/Bindings.md"), encoding: .utf8)
    }

    // MARK: Every transform is documented

    @Test func everyBuiltinTransformIsDocumented() throws {
        let names = TransformRegistry().names
        #expect(names.contains("format") && names.contains("count"), "the registry lists its built-ins: \(names)")
        let (headings, spans) = Self.headingsAndCodeSpans(try Self.document())
        for name in names {
            let inHeading = headings.contains { Self.words(of: $0).contains(name) }
            #expect(
                inHeading || spans.contains(name),
                "transform '\(name)' is registered but docs/Bindings.md has no heading or code span `\(name)`")
        }
    }

    /// The heading lines and the code spans of the text outside fenced blocks.
    static func headingsAndCodeSpans(_ text: String) -> (headings: [String], spans: Set<String>) {
        var headings: [String] = [], spans: Set<String> = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            if fenced { continue }
            if line.hasPrefix("#") { headings.append(String(line)) }
            let parts = line.split(separator: "`", omittingEmptySubsequences: false)
            // Odd-numbered parts are inside single backticks.
            for (index, part) in parts.enumerated() where index % 2 == 1 { spans.insert(String(part)) }
        }
        return (headings, spans)
    }

    /// The identifiers of a heading (`### Aggregates: `count`, `sum`` → Aggregates, count, sum).
    static func words(of heading: String) -> Set<String> {
        Set(heading.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
    }

    // MARK: Every example binds

    /// The contents of the fenced blocks of `language`.
    static func blocks(_ text: String, language: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil {
                if line == "```\(language)" { current = [] }
            } else if line.hasPrefix("```") {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The binding entries of the `json` blocks: objects with `source` and `target` (or arrays of them).
    static func jsonEntries(_ text: String) throws -> [JSON] {
        var entries: [JSON] = []
        for block in blocks(text, language: "json") {
            let json: JSON
            do { json = try JSON(parsing: Array(block.utf8)) } catch {
                Issue.record("a json block of docs/Bindings.md is not valid JSON (\(error)):\n\(block)")
                continue
            }
            let candidates: [JSON] = json.arrayValue.map { Array($0) } ?? [json]
            entries += candidates.filter { $0["source"] != nil && $0["target"] != nil }
        }
        return entries
    }

    /// The bodies (`-d '…'`) of the `curl` commands in `sh` blocks that POST to `/bindings`.
    static func curlEntries(_ text: String) throws -> [JSON] {
        var entries: [JSON] = []
        for block in blocks(text, language: "sh") {
            // One command per line, continuation lines joined.
            let commands = block.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            for command in commands where command.contains("curl") && command.contains("-X POST") && command.contains("/bindings") {
                guard let start = command.range(of: "-d '"),
                    let end = command[start.upperBound...].firstIndex(of: "'")
                else {
                    Issue.record("a POST /bindings example has no -d '…' body: \(command)")
                    continue
                }
                entries.append(try JSON(parsing: Array(command[start.upperBound..<end].utf8)))
            }
        }
        return entries
    }

    @Test func theDocShowsEntriesInJSONAndCurl() throws {
        let text = try Self.document()
        #expect(try Self.jsonEntries(text).count >= 15, "the transforms' one-line examples are found")
        #expect(try Self.curlEntries(text).count >= 1, "the POST /bindings example is found")
    }

    @Test func everyExampleEntryParsesAndBinds() throws {
        let text = try Self.document()
        for entry in try Self.jsonEntries(text) + Self.curlEntries(text) {
            let spec: BindingSpec
            do { spec = try BindingSpec(json: entry) } catch {
                Issue.record("\(entry) does not parse: \(error)")
                continue
            }
            let store = Store()
            let models = try Self.models(for: spec, entry: entry)
            for (name, value) in models { try store.put(name, value) }
            let registry = BindingRegistry(store: store)
            do {
                let binding = try registry.bind(json: entry)
                #expect(binding.lastError == nil, "\(entry) on \(models): \(binding.lastError?.description ?? "")")
                #expect((try? store.value(of: spec.target.model, at: spec.target.path)) != nil, "\(entry) wrote no target")
            } catch {
                Issue.record("\(entry) on \(models) does not bind: \(error)")
            }
        }
    }

    /// Models with a value at the entry's source that suits its transform and rule, and the target's parent.
    static func models(for spec: BindingSpec, entry: JSON) throws -> OrderedDictionary<String, JSON> {
        var models: OrderedDictionary<String, JSON> = [spec.source.model: [:]]
        models[spec.target.model] = models[spec.target.model] ?? [:]
        let value = try sourceValue(for: spec, entry: entry)
        models[spec.source.model] = placed(value, at: spec.source.path.components[...], in: models[spec.source.model]!)
        if let parent = spec.target.path.parent {
            models[spec.target.model] = placed(nil, at: parent.components[...], in: models[spec.target.model]!)
        }
        return models
    }

    /// `document` with `value` at `path`, creating objects on the way (`nil`: just the objects).
    static func placed(_ value: JSON?, at path: ArraySlice<String>, in document: JSON) -> JSON {
        guard let first = path.first else { return value ?? document }
        var members = document.objectValue ?? [:]
        members[first] = placed(value, at: path.dropFirst(), in: members[first] ?? [:])
        return .object(members)
    }

    /// A source value the entry's transform and validation rule accept.
    static func sourceValue(for spec: BindingSpec, entry: JSON) throws -> JSON {
        let rule = entry["validate"]
        func scalar() throws -> JSON {
            guard let transform = spec.transform else {
                if let first = rule?["oneOf"]?.arrayValue?.first { return first }
                switch rule?["type"]?.stringValue {
                case "string": return "text"
                case "boolean": return true
                default:
                    let low = rule?["min"]?.doubleValue ?? 20, high = rule?["max"]?.doubleValue ?? 20
                    return .double(Swift.min(Swift.max(20, low), high))
                }
            }
            switch transform.name {
            case "not": return true
            case "lookup":
                if let table = transform.parameters["table"]?.objectValue, let key = table.keys.first { return .string(key) }
                if let pair = transform.parameters["pairs"]?.arrayValue?.first?.arrayValue?.first { return pair }
                Issue.record("\(entry): a lookup with neither a table key nor a pair")
                return .null
            case "identity", "format", "scale", "threshold": return 20
            default:
                Issue.record("\(entry): the test has no sample value for transform '\(transform.name)'; add one")
                return 20
            }
        }
        if let name = spec.transform?.name, NumericAggregator.Kind(rawValue: name) != nil {
            guard let of = spec.transform?.parameters["of"]?.stringValue else { return [1, 2.5, 4] }
            let path = try Path(dotted: of).components[...]
            return .array(Deque([1, 2.5, 4].map { placed(.double($0), at: path, in: [:]) }))
        }
        if spec.transform?.name == "view" {
            return bindingJSON(#"[{"id": 1, "status": "open", "time": 5}, {"id": 2, "status": "done", "time": 7}]"#)
        }
        if spec.each { return .array(Deque(try (0..<3).map { _ in try scalar() })) }
        return try scalar()
    }

    @Test func everyExampleDefinitionLoads() throws {
        var definitions = 0
        for block in Self.blocks(try Self.document(), language: "json") {
            guard let json = try? JSON(parsing: Array(block.utf8)), json["bindings"] != nil else { continue }
            definitions += 1
            let registry = BindingRegistry(store: Store())
            do {
                let set = try BindingSet(definition: json, registry: registry)
                for binding in set.bindings {
                    #expect(binding.lastError == nil, "\(binding.id): \(binding.lastError?.description ?? "")")
                }
            } catch {
                Issue.record("a definition in docs/Bindings.md does not load: \(error)")
            }
        }
        #expect(definitions >= 1)
    }

    @Test func theDefinitionExampleGivesTheStatedPanel() throws {
        let text = try Self.document()
        let store = Store()
        let definition = try #require(Self.blocks(text, language: "json").first { $0.contains("\"models\"") })
        _ = try BindingSet(definition: JSON(parsing: Array(definition.utf8)), registry: BindingRegistry(store: store))
        let stated = #"{"label": "20.5 °C", "hot": "ok", "count": 2, "average": 19.75, "unit": "Celsius", "limit": 30}"#
        #expect(text.replacingOccurrences(of: "\n", with: " ").contains("`panel` at `\(stated)`"))
        #expect(try store.value(of: "panel") == JSON(parsing: Array(stated.utf8)))
    }

    // MARK: The Swift example

    @Test func swiftExampleRuns() throws {
        // DOC-BEGIN swift
        let store = Store()
        try store.put("sensor", ["temperature": 20.5, "readings": [18, 21.5]])
        try store.put("panel", [:])
        let registry = BindingRegistry(store: store)

        // The same entry as in a definition file or a POST /bindings body:
        try registry.bind(json: [
            "source": "sensor.temperature", "target": "panel.label",
            "transform": ["name": "format", "pattern": "%.1f °C"]
        ])
        // The same, built in Swift:
        let average = try registry.bind(
            BindingSpec(
                "sensor.readings", "panel.average",
                transform: TransformSpec("avg"), id: "average"))
        let setpoint = try registry.bind(
            BindingSpec(
                "sensor.temperature", "panel.setpoint", mode: .twoWay,
                validation: try Validation(json: ["min": 0, "max": 40, "coerce": true])))

        try store.set(21.5, at: Path(dotted: "temperature"), in: "sensor")
        try store.append(30, to: Path(dotted: "readings"), in: "sensor")
        let label = try store.value(of: "panel", at: Path(dotted: "label"))  // "21.5 °C"
        let mean = try store.value(of: "panel", at: Path(dotted: "average"))  // 23.166666666666668
        try store.set(55, at: Path(dotted: "setpoint"), in: "panel")  // stored as 40, sent back
        let temperature = try store.value(of: "sensor", at: Path(dotted: "temperature"))  // 40

        try registry.setEnabled(id: average.id, false)
        try registry.unbind(id: setpoint.id)
        // DOC-END swift
        #expect(label == "21.5 °C")
        #expect(mean == .double((18 + 21.5 + 30) / 3) && mean.description == "23.166666666666668")
        #expect(temperature == 40 && store.at("panel.setpoint") == 40)
        #expect(average.isEnabled == false && setpoint.isRemoved)
    }

    @Test func docShowsTheTestedSwiftExample() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let example = try #require(
            DocumentedExample.shownAndTested(
                document: try Self.document(),
                marker: "<!-- swift example: compiled and run by Tests/LiveBindTests/Engine/Bindings/BindingsDocTests.swift -->",
                source: source, begin: "// DOC-BEGIN swift", end: "// DOC-END swift"))
        #expect(example.shown == example.tested)
    }
}
