import FuzzDriver
import OrderedCollections
import Glibc
import LiveBind

/// libFuzzer entry point: the input's first line is the JSON entry of `POST /bindings`; each further line
/// that parses as JSON is a value to run the entry's transform on. It must never crash or hang, and:
/// - the entry parses to a spec or is refused with `BindingError.invalidSpec`;
/// - a spec written back as an entry parses to the same spec, and its transform's `json` to the same transform;
/// - the registry makes the transform or refuses it with an error about the transform; an accepted
///   `format` pattern has a width of at most 64 and a precision of at most 17 (NumberFormat's bounds);
/// - the transform maps a value to a value or throws a `BindingError`; a `format` result is no longer
///   than its pattern, its width and the value's text; for a reversible transform, whatever the reverse
///   gives maps forward to the value it reversed (a two-way binding does not change a write it sends back);
/// - binding the entry over a store succeeds only when it parses, keeps its mode and transform, and
///   writes to its source then run it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBindingSpec(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    guard let entry = try? JSON(parsing: String(lines[0])) else { return 0 }
    var values = SpecFixture.samples
    for line in lines.dropFirst().prefix(8) { if let value = try? JSON(parsing: String(line)) { values.append(value) } }

    let spec: BindingSpec?
    do { spec = try BindingSpec(json: entry) } catch {
        guard case .invalidSpec = error else { fail("the entry was refused with \(error), not invalidSpec") }
        spec = nil
    }
    if let spec { checkRoundTrip(spec) }
    if let spec, let transformSpec = spec.transform {
        values += scalars(in: .object(transformSpec.parameters))
        checkTransform(transformSpec, on: values)
    }
    checkBinding(entry, spec: spec, values: values)
    return 0
}

/// The spec written back as an entry (`BindingSpec` has no encoder of its own: this is the entry format).
func entry(of spec: BindingSpec) -> JSON {
    var members: [(String, JSON)] = [
        ("source", .string(spec.source.description)), ("target", .string(spec.target.description)),
        ("mode", .string(spec.mode.rawValue)), ("each", .bool(spec.each))
    ]
    if let transform = spec.transform { members.append(("transform", transform.json)) }
    if let validation = spec.validation { members.append(("validate", validation.json)) }
    if let id = spec.id { members.append(("id", .string(id))) }
    return .object(OrderedDictionary(uniqueKeysWithValues: members))
}

func checkRoundTrip(_ spec: BindingSpec) {
    let written = entry(of: spec)
    let again: BindingSpec
    do { again = try BindingSpec(json: JSON(parsing: written.encoded())) } catch {
        fail("the spec written back, \(written), does not parse: \(error)")
    }
    guard again.source == spec.source, again.target == spec.target, again.mode == spec.mode, again.each == spec.each,
        again.id == spec.id, again.transform == spec.transform, again.validation?.json == spec.validation?.json
    else {
        fail("the spec written back, \(written), parses to another spec")
    }
    if let transform = spec.transform, (try? TransformSpec(json: transform.json)) != transform {
        fail("transform \(transform.json) does not read back as itself")
    }
}

func checkTransform(_ spec: TransformSpec, on values: [JSON]) {
    let transform: Transform
    do { transform = try SpecFixture.transforms.make(spec) } catch {
        switch error {
        case .unknownTransform, .invalidParameter, .invalidSpec: return
        default: fail("transform \(spec.json) was refused with \(error)")
        }
    }
    var pattern: String?
    if spec.name == "format", case .string(let text)? = spec.parameters["pattern"] {
        pattern = text
        for (width, precision) in conversions(in: text) where width > 64 || precision > 17 {
            fail("format accepted width \(width), precision \(precision) in \(spec.json)")
        }
    }
    var outputs: [JSON] = []
    for value in values {
        guard let result = apply(transform.forward, value, transform.name) else { continue }
        outputs.append(result)
        if let pattern {
            guard case .string(let formatted) = result else { fail("format gave \(result), not a string") }
            let allowed = pattern.count + 64 + (value.stringValue ?? value.description).count + 32
            if formatted.count > allowed { fail("format made \(formatted.count) characters of \(value) with \(spec.json)") }
        }
    }
    // The reverse runs on what a client writes to the target: anything. Whatever it gives must map back.
    guard let reverse = transform.reverse, spec.name != "scale" else { return }  // scale is only near its inverse
    for value in values + outputs {
        guard let source = apply(reverse, value, transform.name) else { continue }
        guard let forward = apply(transform.forward, source, transform.name), forward == value else {
            fail("\(spec.json): the reverse of \(value) is \(source), which maps forward to something else")
        }
    }
}

/// `function(value)`, nil when it throws a `BindingError` (any other error is a failure).
func apply(_ function: @Sendable (JSON) throws -> JSON, _ value: JSON, _ name: String) -> JSON? {
    do { return try function(value) } catch is BindingError { return nil } catch {
        fail("transform \(name) threw \(error), not a BindingError")
    }
}

/// Width and precision of each conversion in a `format` pattern, read as NumberFormat reads them (any
/// character with a whole-number value is a digit) but saturating, so that a huge one is seen as huge.
func conversions(in pattern: String) -> [(width: Int, precision: Int)] {
    var found: [(Int, Int)] = []
    var characters = Substring(pattern)
    func number() -> Int {
        var value = 0
        while let digit = characters.first?.wholeNumberValue {
            value = min(value, 1_000_000) * 10 + min(digit, 1_000_000)
            characters.removeFirst()
        }
        return value
    }
    while let character = characters.popFirst() {
        guard character == "%" else { continue }
        if characters.first == "%" { characters.removeFirst(); continue }
        while let flag = characters.first, "-+ 0".contains(flag) { characters.removeFirst() }
        let width = number()
        var precision = 0
        if characters.first == "." { characters.removeFirst(); precision = number() }
        found.append((width, precision))
    }
    return found
}

/// Every number, string and Boolean in `value`: a lookup's keys and values, a threshold's outputs.
func scalars(in value: JSON) -> [JSON] {
    switch value {
    case .array(let elements): elements.flatMap(scalars)
    case .object(let members): members.keys.map(JSON.string) + members.values.flatMap(scalars)
    case .null: []
    default: [value]
    }
}

func checkBinding(_ entry: JSON, spec: BindingSpec?, values: [JSON]) {
    let store = Store()
    do {
        try store.put("sensor", SpecFixture.sensor)
        try store.put("panel", SpecFixture.panel)
    } catch {
        fail("the fixture's models were refused: \(error)")
    }
    let registry = BindingRegistry(store: store, transforms: SpecFixture.transforms)
    let binding: Binding
    do { binding = try registry.bind(json: entry) } catch { return }
    guard let spec else { fail("bound an entry that does not parse: \(entry)") }
    let info = binding.info
    if info.mode != spec.mode || info.transform != spec.transform { fail("the binding of \(entry) is \(info.json)") }
    if let model = spec.source.model == "sensor" || spec.source.model == "panel" ? spec.source.model : nil {
        for value in values.prefix(6) { _ = try? store.set(value, at: spec.source.path, in: model) }
    }
    if registry.all.count != 1 { fail("one entry made \(registry.all.count) bindings") }
    do { try registry.unbind(id: binding.id) } catch { fail("unbinding \(binding.id) failed: \(error)") }
}

/// The fixture's values are kept as text and parsed for each input: LeakSanitizer does not read Swift's
/// enum payload pointers (tag bits set) as pointers, so a `JSON` held in a static reads as leaked.
enum SpecFixture {
    static let transforms = TransformRegistry()
    static var sensor: JSON {
        parse(
            #"{"temperature": 20.5, "count": 3, "on": true, "name": "probe", "readings": [1, 2.5, -3], "#
                + #""rows": [{"v": 1}, {"v": "x"}], "label": ""}"#)
    }
    static var panel: JSON { parse(#"{"label": "", "value": 0, "flag": false, "items": []}"#) }
    /// What every transform is run on, besides the input's values and its own parameters.
    static var samples: [JSON] {
        Array(
            parse(
                #"[0, 1, -1, 2.5, -0.0, 1e300, -1e-300, 9223372036854775807, -9223372036854775808, "#
                    + #""", "abc", "12", true, false, null, [1, 2, 3], [{"v": 1}, {"v": "x"}], {"a": 1}]"#
            ).arrayValue!)
    }

    private static func parse(_ text: String) -> JSON {
        do { return try JSON(parsing: text) } catch { fail("the fixture does not parse: \(error)") }
    }
}

/// Process entry: SwiftPM names an executable's entry `FuzzBindingSpec_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzBindingSpec_main")
public func fuzzBindingSpecMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzBindingSpec)
}
