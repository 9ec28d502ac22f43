/// What a binding should be, before it exists: the same JSON as one entry of a definition file.
///
/// ```json
/// {"source": "sensor.temperature", "target": "panel.label", "mode": "twoWay",
///  "transform": "count" | {"name": "format", "pattern": "%.1f °C"},
///  "validate": {"min": 0, "max": 100, "coerce": true}, "each": false, "id": "optional-id"}
/// ```
/// Only `source` and `target` are required: that is a one-way binding without transform. `each: true`
/// applies the transform to every element of a source array (the target array mirrors it granularly).
public struct BindingSpec: Sendable {
    /// Where values come from.
    public var source: BindingEndpoint
    /// Where values go.
    public var target: BindingEndpoint
    /// One-way (default) or two-way.
    public var mode: BindingMode
    /// The transform by name with its parameters, or `nil` for none.
    public var transform: TransformSpec?
    /// The rule for values written into the target.
    public var validation: Validation?
    /// Apply the transform per element of a source array and mirror the array granularly.
    public var each: Bool
    /// A chosen id (see ``idRule``); `nil` lets the registry pick one.
    public var id: String?

    /// What a chosen binding id must be: it names the binding in `/bindings/{id}`, in the data
    /// directory and in a cluster's message headers, so every node and every store must agree on it
    /// byte for byte.
    public static let idRule = "1 to 128 characters, none of them a control character or '/', not starting or ending with a space"

    /// Whether `id` follows ``idRule``.
    public static func isValidID(_ id: String) -> Bool {
        guard !id.isEmpty, id.unicodeScalars.count <= 128 else { return false }
        guard let first = id.unicodeScalars.first, let last = id.unicodeScalars.last,
            !first.properties.isWhitespace, !last.properties.isWhitespace
        else { return false }
        return !id.unicodeScalars.contains { $0 == "/" || $0.properties.generalCategory == .control }
    }

    /// A spec from code.
    public init(
        source: BindingEndpoint, target: BindingEndpoint, mode: BindingMode = .oneWay,
        transform: TransformSpec? = nil, validation: Validation? = nil, each: Bool = false, id: String? = nil
    ) {
        self.source = source
        self.target = target
        self.mode = mode
        self.transform = transform
        self.validation = validation
        self.each = each
        self.id = id
    }

    /// A spec from code with dotted `model.path` endpoints; invalid paths are programmer errors.
    public init(
        _ source: String, _ target: String, mode: BindingMode = .oneWay, transform: TransformSpec? = nil,
        validation: Validation? = nil, each: Bool = false, id: String? = nil
    ) {
        do {
            self.init(
                source: try BindingEndpoint(parsing: source), target: try BindingEndpoint(parsing: target),
                mode: mode, transform: transform, validation: validation, each: each, id: id)
        } catch {
            preconditionFailure("invalid binding endpoint: \(error)")
        }
    }

    /// Reads one entry; throws the first problem (`BindingSpec.issues(in:)` lists all of them).
    public init(json: JSON) throws(BindingError) {
        switch Self.parse(json, at: "") {
        case .success(let spec): self = spec
        case .failure(let failure):
            let first = failure.issues[0]
            throw .invalidSpec(position: first.position, reason: first.reason)
        }
    }

    /// Reads one entry, collecting every problem with its position under `position`.
    static func parse(_ json: JSON, at position: String) -> Result<BindingSpec, BindingIssues> {
        var issues: [BindingIssue] = []
        func at(_ member: String) -> String { BindingIssue.join(position, member) }
        guard case .object(let members) = json else {
            return .failure(
                BindingIssues([BindingIssue(position: position, reason: "expected an object with source and target, found \(json)")]))
        }
        let known: Set<String> = ["source", "target", "mode", "transform", "validate", "each", "id"]
        for key in members.keys where !known.contains(key) {
            issues.append(BindingIssue(position: at(key), reason: "unknown member; use one of \(known.sorted())"))
        }
        func endpoint(_ key: String) -> BindingEndpoint? {
            guard case .string(let text)? = members[key] else {
                issues.append(BindingIssue(position: at(key), reason: "required: a string \"model.path\""))
                return nil
            }
            do { return try BindingEndpoint(parsing: text) } catch {
                issues.append(BindingIssue.from(error, at: at(key)))
                return nil
            }
        }
        let source = endpoint("source")
        let target = endpoint("target")
        var mode = BindingMode.oneWay
        if let value = members["mode"] {
            if let text = value.stringValue, let parsed = BindingMode(rawValue: text) {
                mode = parsed
            } else {
                issues.append(BindingIssue(position: at("mode"), reason: "must be \"oneWay\" or \"twoWay\", found \(value)"))
            }
        }
        var transform: TransformSpec?
        if let value = members["transform"], value != .null {
            do { transform = try TransformSpec(json: value) } catch { issues.append(BindingIssue.from(error, at: at("transform"))) }
        }
        var validation: Validation?
        if let value = members["validate"], value != .null {
            do { validation = try Validation(json: value) } catch { issues.append(BindingIssue.from(error, at: at("validate"))) }
        }
        var each = false
        if let value = members["each"] {
            if let flag = value.boolValue {
                each = flag
            } else {
                issues.append(BindingIssue(position: at("each"), reason: "must be true or false"))
            }
        }
        var id: String?
        if let value = members["id"] {
            if let text = value.stringValue, Self.isValidID(text) {
                id = text
            } else {
                issues.append(BindingIssue(position: at("id"), reason: "must be a string of \(Self.idRule)"))
            }
        }
        guard issues.isEmpty, let source, let target else { return .failure(BindingIssues(issues)) }
        return .success(
            BindingSpec(
                source: source, target: target, mode: mode, transform: transform, validation: validation, each: each, id: id))
    }
}

/// A non-empty list of issues, so it can travel in a `Result`.
struct BindingIssues: Error {
    var issues: [BindingIssue]
    init(_ issues: [BindingIssue]) { self.issues = issues }
}
