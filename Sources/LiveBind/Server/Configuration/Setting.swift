import LiveBindEngine
/// One setting of a server or cluster node, declared once: its flag, what it does, the values it takes
/// and where it lives in the configuration.
///
/// The lists of them (``LiveBindServer/Configuration/settings``, ``ClusterConfiguration/settings``) are
/// what `livebind-server` reads its options from and prints in `--help`, what docs/HTTP.md's table of
/// flags is made from, and what ``LiveBindServer/Configuration/validate()`` checks a configuration
/// against, so an embedder gets the same refusals as the command line. The defaults are the
/// configuration's own (`Configuration()`).
package struct Setting<Root>: Sendable {
    /// The flag without its dashes: `max-streams` is `--max-streams`.
    package let flag: String
    /// The section of `--help` and of the docs it is listed in ("Network", "Streams", …).
    package let group: String
    /// One sentence for `--help` and the docs.
    package let help: String
    /// What it takes and where it lives.
    package let kind: Kind

    /// What a setting takes, with the path to it in `Root`.
    package enum Kind: Sendable {
        /// A whole number in `range`; `unit` names it in help (`N`, `BYTES`, `S`).
        case integer(WritableKeyPath<Root, Int> & Sendable, ClosedRange<Int>, unit: String)
        /// A whole number in `range`, or nil for the automatic value `automatic` describes.
        case optionalInteger(WritableKeyPath<Root, Int?> & Sendable, ClosedRange<Int>, unit: String, automatic: String)
        /// A number in `range`.
        case number(WritableKeyPath<Root, Double> & Sendable, ClosedRange<Double>, unit: String)
        /// Seconds in `range` (fractions allowed), kept as a `Duration`.
        case seconds(WritableKeyPath<Root, Duration> & Sendable, ClosedRange<Double>)
        /// On when given.
        case flag(WritableKeyPath<Root, Bool> & Sendable)
        /// A text; `valid` says whether a value may be used and `rule` what it must be.
        case text(WritableKeyPath<Root, String> & Sendable, unit: String, rule: String, valid: @Sendable (String) -> Bool)
        /// A text, nil when not given (`absent` says what that means).
        case optionalText(WritableKeyPath<Root, String?> & Sendable, unit: String, absent: String)
        /// Repeatable: each time given adds a value.
        case list(WritableKeyPath<Root, [String]> & Sendable, unit: String)
    }

    /// A setting `--flag` listed under `group`, taking what `kind` says, described by `help`.
    package init(_ flag: String, _ group: String, _ kind: Kind, _ help: String) {
        self.flag = flag
        self.group = group
        self.kind = kind
        self.help = help
    }

    /// How the value is written after the flag in `--help` (`N`, `BYTES`, `S`, `FILE`); nil for a flag
    /// that takes none.
    package var valueName: String? {
        switch kind {
        case .integer(_, _, let unit), .optionalInteger(_, _, let unit, _), .number(_, _, let unit),
            .text(_, let unit, _, _), .optionalText(_, let unit, _), .list(_, let unit):
            unit
        case .seconds: "S"
        case .flag: nil
        }
    }

    /// Whether giving it again adds a value rather than replacing it.
    package var isRepeatable: Bool {
        if case .list = kind { return true }
        return false
    }

    /// The value in `root` as it is written on the command line (`4096`, `15`, `off`, `none`).
    package func value(in root: Root) -> String {
        switch kind {
        case .integer(let path, _, _): String(root[keyPath: path])
        case .optionalInteger(let path, _, _, let automatic): root[keyPath: path].map(String.init) ?? automatic
        case .number(let path, _, _): Self.text(root[keyPath: path])
        case .seconds(let path, _): Self.text(root[keyPath: path])
        case .flag(let path): root[keyPath: path] ? "on" : "off"
        case .text(let path, _, _, _): root[keyPath: path]
        case .optionalText(let path, _, let absent): root[keyPath: path] ?? absent
        case .list(let path, _): root[keyPath: path].isEmpty ? "none" : root[keyPath: path].joined(separator: ", ")
        }
    }

    /// What a valid value is, for `--help` and the docs ("at least 1", "0 to 65535"); nil when any is.
    package var rule: String? {
        switch kind {
        case .integer(_, let range, _), .optionalInteger(_, let range, _, _): Self.describe(range)
        case .number(_, let range, _), .seconds(_, let range): Self.describe(range)
        case .text(_, _, let rule, _): rule
        case .flag, .optionalText, .list: nil
        }
    }

    /// Sets the value written as `text` (a flag's `on`/`off`, a number, a file name), as the command
    /// line and settings files do; a list gets one more value. A value it does not take changes nothing.
    package func set(_ text: String, in root: inout Root) throws(ConfigurationError) {
        var changed = root
        try set(text, into: &changed)
        try check(changed)
        root = changed
    }

    private func set(_ text: String, into root: inout Root) throws(ConfigurationError) {
        switch kind {
        case .integer(let path, _, _):
            guard let value = Int(text) else { throw refusal("takes a whole number, not '\(text)'") }
            root[keyPath: path] = value
        case .optionalInteger(let path, _, _, _):
            guard let value = Int(text) else { throw refusal("takes a whole number, not '\(text)'") }
            root[keyPath: path] = value
        case .number(let path, _, _):
            guard let value = Double(text), value.isFinite else { throw refusal("takes a number, not '\(text)'") }
            root[keyPath: path] = value
        case .seconds(let path, let range):
            guard let value = Double(text), value.isFinite else { throw refusal("takes seconds, not '\(text)'") }
            guard range.contains(value) else { throw refusal("must be \(Self.describe(range)) seconds, not \(text)") }
            // Kept in whole milliseconds: a positive value that rounds to none would read back as 0.
            let milliseconds = (value * 1000).rounded()
            guard milliseconds >= 1 || value == 0 else { throw refusal("takes whole milliseconds, at least 0.001 seconds, not \(text)") }
            root[keyPath: path] = .milliseconds(Int64(milliseconds))
        case .flag(let path):
            switch text {
            case "on", "true", "yes", "1": root[keyPath: path] = true
            case "off", "false", "no", "0": root[keyPath: path] = false
            default: throw refusal("takes on or off, not '\(text)'")
            }
        case .text(let path, _, _, _):
            root[keyPath: path] = text
        case .optionalText(let path, _, _):
            root[keyPath: path] = text
        case .list(let path, _):
            root[keyPath: path].append(text)
        }
    }

    /// Throws when `root` holds a value this setting does not take.
    package func check(_ root: Root) throws(ConfigurationError) {
        switch kind {
        case .integer(let path, let range, _):
            let value = root[keyPath: path]
            guard range.contains(value) else { throw refusal("must be \(Self.describe(range)), not \(value)") }
        case .optionalInteger(let path, let range, _, _):
            guard let value = root[keyPath: path] else { return }
            guard range.contains(value) else { throw refusal("must be \(Self.describe(range)), not \(value)") }
        case .number(let path, let range, _):
            let value = root[keyPath: path]
            guard value.isFinite, range.contains(value) else { throw refusal("must be \(Self.describe(range)), not \(value)") }
        case .seconds(let path, let range):
            let value = Self.seconds(root[keyPath: path])
            guard range.contains(value) else { throw refusal("must be \(Self.describe(range)) seconds, not \(Self.text(value))") }
        case .text(let path, _, let rule, let valid):
            let value = root[keyPath: path]
            guard valid(value) else { throw refusal("must be \(rule), not '\(value)'") }
        case .flag, .optionalText, .list:
            return
        }
    }

    /// The error naming this setting.
    func refusal(_ reason: String) -> ConfigurationError {
        ConfigurationError(flag: flag, reason: reason)
    }

    static func describe(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (let low, .max): "at least \(low)"
        case (let low, let high): "\(low) to \(high)"
        }
    }

    static func describe(_ range: ClosedRange<Double>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (let low, .greatestFiniteMagnitude) where low == .leastNonzeroMagnitude: "more than 0"
        case (let low, .greatestFiniteMagnitude): "at least \(text(low))"
        case (let low, let high) where low == .leastNonzeroMagnitude: "more than 0 and at most \(text(high))"
        case (let low, let high): "\(text(low)) to \(text(high))"
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func text(_ duration: Duration) -> String { text(seconds(duration)) }

    /// `15` rather than `15.0`; `0.5` as it is.
    static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}

/// A setting that holds a value it does not take, or a value that cannot be read as one.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The setting's flag, without dashes (`max-streams`).
    public let flag: String
    /// What is wrong, in words that follow the flag: "must be at least 1, not 0".
    public let reason: String

    /// The error for `--flag`, with `reason` following the flag.
    public init(flag: String, reason: String) {
        self.flag = flag
        self.reason = reason
    }

    /// Names the setting by its flag: `--max-streams must be at least 1, not 0`.
    /// (An argument that is no flag at all is named as it was given, quoted.)
    public var description: String { (flag.hasPrefix("'") ? flag : "--" + flag) + " " + reason }
}
