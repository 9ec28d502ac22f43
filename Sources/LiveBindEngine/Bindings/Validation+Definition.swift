import OrderedCollections
import DequeModule

extension Validation {
    /// Reads a rule object; errors name the offending member.
    public init(json: JSON) throws(BindingError) {
        guard case .object(let members) = json else {
            throw .invalidSpec(position: "", reason: "expected an object like {\"min\": 0, \"max\": 100}, found \(json)")
        }
        let known: Set<String> = ["type", "min", "max", "oneOf", "maxLength", "coerce", "message"]
        if let unknown = members.keys.first(where: { !known.contains($0) }) {
            throw .invalidSpec(position: unknown, reason: "unknown validation member; use one of \(known.sorted())")
        }
        let type = try Self.member(members, "type", \.stringValue, "a string")
        if let type, !["number", "integer", "string", "boolean"].contains(type) {
            throw .invalidSpec(position: "type", reason: "must be number, integer, string or boolean")
        }
        let min = try Self.member(members, "min", \.doubleValue, "a number")
        let max = try Self.member(members, "max", \.doubleValue, "a number")
        if let min, let max, min > max { throw .invalidSpec(position: "max", reason: "is below min") }
        let oneOf = try Self.member(members, "oneOf", \.arrayValue, "an array")
        let maxLength = try Self.member(
            members, "maxLength", { if case .int(let n) = $0, n >= 0 { n } else { nil } }, "a non-negative integer")
        let coerce = try Self.member(members, "coerce", \.boolValue, "a Boolean") ?? false
        let message = try Self.member(members, "message", \.stringValue, "a string")
        let rule = Rule(type: type, min: min, max: max, oneOf: oneOf, maxLength: maxLength, coerce: coerce, message: message)
        self.init(json: json, check: { rule.check($0) })
    }

    private static func member<T>(
        _ members: OrderedDictionary<String, JSON>, _ key: String, _ read: (JSON) -> T?, _ expected: String
    ) throws(BindingError) -> T? {
        guard let value = members[key] else { return nil }
        guard let result = read(value) else { throw .invalidSpec(position: key, reason: "must be \(expected)") }
        return result
    }
}

/// The declarative rule behind `Validation(json:)`.
private struct Rule: Sendable {
    var type: String?, min: Double?, max: Double?, oneOf: Deque<JSON>?, maxLength: Int?, coerce: Bool, message: String?

    func check(_ value: JSON) -> Validation.Outcome {
        if let type, !matches(value, type) { return reject("must be of type \(type), found \(value.typeName)") }
        if let oneOf, !oneOf.contains(value) { return reject("must be one of \(JSON.array(oneOf))") }
        if let number = value.doubleValue {
            if let min, number < min {
                return coerce ? .coerce(Self.number(min, like: value)) : reject("must be at least \(JSON.double(min))")
            }
            if let max, number > max {
                return coerce ? .coerce(Self.number(max, like: value)) : reject("must be at most \(JSON.double(max))")
            }
        }
        if let maxLength, case .string(let text) = value, text.count > maxLength {
            return coerce ? .coerce(.string(String(text.prefix(maxLength)))) : reject("must be at most \(maxLength) characters long")
        }
        return .accept
    }

    private func reject(_ reason: String) -> Validation.Outcome { .reject(message ?? reason) }

    private func matches(_ value: JSON, _ type: String) -> Bool {
        switch (type, value) {
        case ("number", .int), ("number", .double), ("string", .string), ("boolean", .bool), ("integer", .int): true
        case ("integer", .double(let d)): d.rounded() == d
        default: false
        }
    }

    /// A bound as an `.int` when the value was an integer and the bound is integral.
    private static func number(_ bound: Double, like value: JSON) -> JSON {
        if case .int = value, let exact = Int(exactly: bound) { return .int(exact) }
        return .double(bound)
    }
}
