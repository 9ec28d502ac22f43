import Foundation
import LiveBindEngine

/// `GET /models/{name}{pointer}?history` (a location's past values, raw or in buckets, optionally with
/// who made each change) and `?at=` (a document as it was), read from the data directory's history
/// (``HistoryDatabase``) without the store's lock.
struct HistoryEndpoint: Sendable {
    /// nil when the server keeps no history.
    let history: HistoryDatabase?
    let limits: HistoryDatabase.Limits
    /// `--history-max-buckets`.
    let maxBuckets: Int

    /// A point in the history as a query names it.
    enum Point: Equatable {
        /// Milliseconds since 1970.
        case time(Int64)
        /// An event id.
        case event(UInt64)
    }

    /// The times a point may name: RFC 3339's years, 0001 to 9999 (the arithmetic on times stays far
    /// from overflowing).
    static let times: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// The point `text` names: an event id (digits), an RFC 3339 time, or a duration before now (`-1h`).
    static func point(_ text: String, parameter: String) throws(RequestError) -> Point {
        let point = try parse(text, parameter: parameter)
        if case .time(let time) = point, !times.contains(time) {
            throw .badRequest("\(parameter)=\(text) is outside the years 0001 to 9999")
        }
        return point
    }

    private static func parse(_ text: String, parameter: String) throws(RequestError) -> Point {
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let id = UInt64(text) else { throw .badRequest("\(parameter)=\(text) is no event id") }
            return .event(id)
        }
        if text.hasPrefix("-"), let milliseconds = HistoryUnits.milliseconds(text.dropFirst()) {
            return .time(HistoryDatabase.now() - min(milliseconds, times.upperBound - times.lowerBound))
        }
        // A `+` of an offset sent without percent-encoding arrives as a space (form encoding).
        if let time = HistoryTime.parse(text.replacingOccurrences(of: " ", with: "+")) { return .time(time) }
        throw .badRequest("""
            \(parameter)=\(text) is not a time: give an RFC 3339 time (2026-11-26T10:00:00Z), a duration before \
            now (-1h, -30m, -7d) or an event id
            """)
    }

    /// The history, once it has every commit the store shows.
    private func database() throws(HistoryError) -> HistoryDatabase {
        guard let history else { throw .off }
        history.catchUp()
        return history
    }

    /// The event `point` stands for (itself, or the last event at or before the time), and the time
    /// it is at. With `clamped`, a point before the history's start is its start.
    func resolve(_ point: Point, _ history: HistoryDatabase, clamped: Bool = false) throws -> (sequence: UInt64, time: Int64) {
        switch point {
        case .event(let id):
            let sequence = try history.checkedSequence(id, clamped: clamped)
            return (sequence, try history.time(of: sequence))
        case .time(let time):
            return try history.sequence(atOrBefore: time, clamped: clamped)
        }
    }

    // MARK: ?at=

    /// `GET /models/{name}{pointer}?at=…`: the value as it was after the last event at or before the point.
    func value(_ name: String, _ pointer: String, at text: String) throws -> HTTPResponse {
        let history = try database()
        let path = try Path(pointer: pointer)
        let sequence = try resolve(try Self.point(text, parameter: "at"), history).sequence
        guard let document = try history.document(name, at: sequence) else { throw StoreError.modelNotFound(name) }
        let value: JSON
        do {
            value = try document.value.value(at: path)
        } catch {
            throw StoreError.pathNotFound(path)
        }
        var response = HTTPResponse.bytes(value.encoded(), contentType: RequestBody.json)
        response.headers.add("ETag", "\"\(document.revision)\"")
        response.headers.add(ModelEndpoint.eventIDHeader, "\(sequence)")
        return response
    }

    // MARK: ?history

    /// `GET /models/{name}{pointer}?history[&from=…][&to=…][&step=…][&audit]`.
    func series(_ name: String, _ pointer: String, _ request: HTTPRequest, audit: Bool) throws -> HTTPResponse {
        let history = try database()
        let to = try request.queryValue("to").map { text throws(RequestError) in try Self.point(text, parameter: "to") }
        let from = try request.queryValue("from").map { text throws(RequestError) in try Self.point(text, parameter: "from") }
        let csv = request.headers.values(of: "Accept").contains { $0.contains("text/csv") }
        let (bytes, through) = try answer(name, pointer, from: from, to: to, step: request.queryValue("step"), audit: audit,
                                          csv: csv, history: history)
        var response = HTTPResponse.bytes(bytes, contentType: csv ? "text/csv; charset=utf-8" : RequestBody.json)
        response.headers.add(ModelEndpoint.eventIDHeader, "\(through)")
        return response
    }

    /// The buckets of `pointer` from `from` through event `through`, as `?history&step=` answers them
    /// in JSON, and the last event they cover.
    func buckets(_ name: String, _ pointer: String, from: Point, step: String, through: UInt64) throws -> (bytes: [UInt8], through: UInt64) {
        try answer(name, pointer, from: from, to: .event(through), step: step, audit: false, csv: false, history: try database())
    }

    private func answer(_ name: String, _ pointer: String, from: Point?, to: Point?, step text: String?, audit: Bool, csv: Bool,
                        history: HistoryDatabase) throws -> (bytes: [UInt8], through: UInt64) {
        let path = try Path(pointer: pointer)
        var step: Int64?
        if let text {
            guard let milliseconds = HistoryUnits.milliseconds(Substring(text)), milliseconds > 0,
                  milliseconds <= Self.times.upperBound - Self.times.lowerBound else {
                throw RequestError.badRequest("step=\(text) is not a duration: give a whole number and ms, s, m, h, d or w (60s, 5m)")
            }
            step = milliseconds
        }
        let (toSequence, toTime) = try resolve(to ?? .time(HistoryDatabase.now()), history)
        let fromPoint = from ?? .time(toTime - 3_600_000)
        let (fromSequence, fromTime) = try resolve(fromPoint, history, clamped: true)
        guard fromTime <= toTime else { throw RequestError.badRequest("from is after to") }
        if let step {
            // The range asked for, not the part of it the history still has.
            let asked = if case .time(let time) = fromPoint { min(time, fromTime) } else { fromTime }
            let buckets = (toTime - asked) / step + 1
            guard buckets <= Int64(maxBuckets) else {
                throw HistoryError.limit(flag: "history-max-buckets", limit: maxBuckets,
                                         needed: "from … to in steps of \(HistoryUnits.text(milliseconds: step)) is \(buckets) buckets; take a longer step or a shorter range")
            }
        }
        let series = try history.series(name, path, from: fromSequence, to: max(fromSequence, toSequence), step: step,
                                        limits: limits, origins: audit)
        let head = Head(model: name, path: path.pointer, from: fromTime, to: toTime, through: series.through, step: step)
        return (csv ? Self.csv(series, buckets: step != nil, audit: audit) : Self.json(series, head: head, audit: audit), series.through)
    }

    private struct Head {
        var model: String, path: String, from: Int64, to: Int64, through: UInt64, step: Int64?
    }

    /// The answer, written straight into bytes: a day of points is 86,400 of them.
    private static func json(_ series: HistorySeries, head: Head, audit: Bool) -> [UInt8] {
        var bytes = Array(#"{"model":"#.utf8)
        JSON.string(head.model).encode(into: &bytes)
        bytes += #","path":"#.utf8
        JSON.string(head.path).encode(into: &bytes)
        var times = HistoryTime.Writer()
        func time(_ name: String, _ milliseconds: Int64) {
            bytes += ",\"\(name)\":\"".utf8
            times.append(milliseconds, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        time("from", head.from)
        time("to", head.to)
        bytes += #","id":""#.utf8
        bytes.appendDecimal(head.through)
        bytes += #"","start":"#.utf8
        if let start = series.start {
            bytes += #"{"value":"#.utf8
            start.encode(into: &bytes)
            bytes.append(UInt8(ascii: "}"))
        } else {
            bytes += "null".utf8
        }
        if let step = head.step {
            bytes += #","step":"#.utf8
            JSON.string(HistoryUnits.text(milliseconds: step)).encode(into: &bytes)
            bytes += #","buckets":["#.utf8
            for (index, bucket) in series.buckets.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += #"{"time":""#.utf8
                times.append(bucket.time, to: &bytes)
                bytes += #"","count":"#.utf8
                bytes.appendDecimal(UInt64(bucket.count))
                bytes += #","first":"#.utf8
                bucket.first.encode(into: &bytes)
                bytes += #","last":"#.utf8
                bucket.last.encode(into: &bytes)
                for (name, value) in [("min", bucket.min), ("max", bucket.max), ("avg", bucket.average)] {
                    bytes += ",\"\(name)\":".utf8
                    number(value).encode(into: &bytes)
                }
                bytes.append(UInt8(ascii: "}"))
            }
        } else {
            bytes += #","points":["#.utf8
            for (index, point) in series.points.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += #"{"time":""#.utf8
                times.append(point.time, to: &bytes)
                bytes += #"","id":""#.utf8
                bytes.appendDecimal(point.sequence)
                if let value = point.value {
                    bytes += #"","value":"#.utf8
                    value.encode(into: &bytes)
                } else {
                    bytes += #"","removed":true"#.utf8
                }
                if audit {
                    bytes += #","actor":"#.utf8
                    (point.origin?.actor.map(JSON.string) ?? .null).encode(into: &bytes)
                    bytes += #","route":"#.utf8
                    (point.origin?.route.map(JSON.string) ?? .null).encode(into: &bytes)
                }
                bytes.append(UInt8(ascii: "}"))
            }
        }
        bytes += "]}".utf8
        return bytes
    }

    private static func number(_ value: Double?) -> JSON { value.map(JSON.double) ?? .null }

    private static func csv(_ series: HistorySeries, buckets: Bool, audit: Bool) -> [UInt8] {
        var text = ""
        if buckets {
            text = "time,count,first,last,min,max,avg\r\n"
            for bucket in series.buckets {
                let fields = [HistoryTime.text(bucket.time), String(bucket.count), field(bucket.first), field(bucket.last),
                              bucket.min.map { "\($0)" } ?? "", bucket.max.map { "\($0)" } ?? "", bucket.average.map { "\($0)" } ?? ""]
                text += fields.joined(separator: ",") + "\r\n"
            }
        } else {
            text = audit ? "time,id,value,actor,route\r\n" : "time,id,value\r\n"
            for point in series.points {
                var fields = [HistoryTime.text(point.time), String(point.sequence), point.value.map(field) ?? ""]
                if audit { fields += [quoted(point.origin?.actor ?? ""), quoted(point.origin?.route ?? "")] }
                text += fields.joined(separator: ",") + "\r\n"
            }
        }
        return Array(text.utf8)
    }

    /// A value as a CSV field: its JSON text, quoted when it needs to be (RFC 4180).
    private static func field(_ value: JSON) -> String { quoted(String(decoding: value.encoded(), as: UTF8.self)) }

    private static func quoted(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
