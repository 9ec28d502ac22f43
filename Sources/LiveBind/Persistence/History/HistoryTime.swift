import Foundation
import LiveBindEngine

/// Times in history answers and queries: milliseconds since 1970, written as RFC 3339 in UTC.
enum HistoryTime {
    /// `milliseconds` as `2026-11-26T10:00:00.000Z`, without a formatter (a series writes one per point).
    static func text(_ milliseconds: Int64) -> String {
        let days = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let rest = milliseconds - days * 86_400_000
        // The civil date of a day count (days since 1970-01-01), in 400-year eras of 146,097 days.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(rest / 3_600_000, 2)):"
            + "\(padded(rest / 60_000 % 60, 2)):\(padded(rest / 1000 % 60, 2)).\(padded(rest % 1000, 3))Z"
    }

    /// Writes times as ``text(_:)`` does, straight into bytes, keeping the last day's date: a series
    /// writes one time per point, mostly of one day.
    struct Writer {
        private var day: Int64?
        private var date: [UInt8] = []

        init() {}

        mutating func append(_ milliseconds: Int64, to bytes: inout [UInt8]) {
            let day = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
            if day != self.day {
                self.day = day
                date = Array(HistoryTime.text(day * 86_400_000).utf8.prefix(11))  // "2026-11-26T"
            }
            bytes += date
            let rest = milliseconds - day * 86_400_000
            func two(_ value: Int64) {
                bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
                bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
            }
            two(rest / 3_600_000)
            bytes.append(UInt8(ascii: ":"))
            two(rest / 60_000 % 60)
            bytes.append(UInt8(ascii: ":"))
            two(rest / 1000 % 60)
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 1000 / 100))
            two(rest % 100)
            bytes.append(UInt8(ascii: "Z"))
        }
    }

    /// Milliseconds since 1970 of an RFC 3339 time (`2026-11-26T10:00:00Z`, with or without fractions,
    /// any offset); nil when `text` is not one.
    static func parse(_ text: String) -> Int64? {
        guard text.count <= 40 else { return nil }
        let styles = [Date.ISO8601FormatStyle(includingFractionalSeconds: true), Date.ISO8601FormatStyle()]
        for style in styles {
            if let date = try? style.parse(text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return nil
    }
}
