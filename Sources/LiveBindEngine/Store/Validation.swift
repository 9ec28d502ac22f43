/// A rule for values written into a binding's target: accept, reject with a message, or coerce.
///
/// From a definition file: `"validate": {"type": "number", "min": 0, "max": 100, "coerce": true}`.
/// Members: `type` (`number`, `integer`, `string`, `boolean`), `min`, `max`, `oneOf` (array), `maxLength`,
/// `coerce` (clamp numbers into `min`…`max`, cut strings to `maxLength`; default `false` = reject),
/// `message` (replaces the generated rejection message).
public struct Validation: Sendable {
    /// What a rule decided about a value.
    public enum Outcome: Sendable, Equatable {
        /// Write the value as it is.
        case accept
        /// Refuse the write; the message says why.
        case reject(String)
        /// Write this value instead.
        case coerce(JSON)
    }

    private let rule: @Sendable (JSON) -> Outcome
    /// The rule as JSON for binding descriptions (`null` for a rule given as a Swift closure).
    public let json: JSON

    /// A rule written in Swift.
    public init(_ rule: @escaping @Sendable (JSON) -> Outcome) {
        self.rule = rule
        self.json = .string("custom")
    }

    /// Decides about `value`.
    public func check(_ value: JSON) -> Outcome { rule(value) }

    /// A rule from its check and the JSON that describes it (see `Validation(json:)` in Bindings/).
    init(json: JSON, check rule: @escaping @Sendable (JSON) -> Outcome) {
        self.rule = rule
        self.json = json
    }
}
