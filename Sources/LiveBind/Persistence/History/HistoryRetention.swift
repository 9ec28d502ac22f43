import LiveBindEngine
/// How much history a data directory keeps (`--history`): commits younger than ``age`` and at most
/// about ``bytes`` of them, whichever bound is reached first; neither keeps none (`0`).
///
/// Written `7d`, `10GB` or both, comma-separated (`7d,10GB`); `0` turns history off.
struct HistoryRetention: Sendable, Equatable {
    /// The oldest a commit may be, in milliseconds; nil: no bound by age.
    var age: Int64?
    /// About the most bytes the history may take on disk; nil: no bound by size.
    var bytes: Int64?

    /// Keeps no history.
    static let off = HistoryRetention(age: nil, bytes: nil)

    /// Whether history is kept at all.
    var isOn: Bool { age != nil || bytes != nil }

    /// The retention `text` describes, nil when it describes none.
    init?(parsing text: String) {
        if text == "0" {
            self = .off
            return
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        for part in parts {
            if let milliseconds = HistoryUnits.milliseconds(part), milliseconds > 0, age == nil {
                age = milliseconds
            } else if let size = HistoryUnits.bytes(part), size > 0, bytes == nil {
                bytes = size
            } else {
                return nil
            }
        }
    }

    init(age: Int64?, bytes: Int64?) {
        self.age = age
        self.bytes = bytes
    }

    /// What `--history` says about a value it does not take.
    static let rule = "0, or an age (7d, 12h) and/or a size (10GB, 500MB), comma-separated"
}

/// The units history settings and queries are written in.
enum HistoryUnits {
    /// Milliseconds in `text`, a whole number and a unit (`500ms`, `90s`, `5m`, `2h`, `7d`, `1w`); nil
    /// when it is not one or overflows.
    static func milliseconds(_ text: Substring) -> Int64? {
        let units: [(String, Int64)] = [
            ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
            ("w", 604_800_000)
        ]
        return scaled(text, units)
    }

    /// Bytes in `text`: a whole number and `B`, `KB`, `MB`, `GB`, `TB` (powers of 1000) or `KiB`, `MiB`,
    /// `GiB`, `TiB` (powers of 1024).
    static func bytes(_ text: Substring) -> Int64? {
        let units: [(String, Int64)] = [
            ("B", 1), ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000),
            ("TB", 1_000_000_000_000), ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30),
            ("TiB", 1 << 40)
        ]
        return scaled(text, units)
    }

    private static func scaled(_ text: Substring, _ units: [(String, Int64)]) -> Int64? {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 18, let number = Int64(digits),
            let scale = units.first(where: { $0.0 == text.dropFirst(digits.count) })?.1
        else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : product
    }

    /// `milliseconds` written back as the largest unit that divides it (`60000` is `1m`).
    static func text(milliseconds: Int64) -> String {
        for (unit, scale) in [("w", Int64(604_800_000)), ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)]
        where milliseconds % scale == 0 && milliseconds >= scale {
            return "\(milliseconds / scale)\(unit)"
        }
        return "\(milliseconds)ms"
    }
}
