import Collections
import Foundation

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

    /// The point `text` names: an event id (digits), an RFC 3339 time, or a duration before now (`-1h`).
    static func point(_ text: String, parameter: String) throws(RequestError) -> Point {
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let id = UInt64(text) else { throw .badRequest("\(parameter)=\(text) is no event id") }
            return .event(id)
        }
        if text.hasPrefix("-"), let milliseconds = HistoryUnits.milliseconds(text.dropFirst()) {
            return .time(HistoryDatabase.now() - milliseconds)
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
            guard let milliseconds = HistoryUnits.milliseconds(Substring(text)), milliseconds > 0 else {
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
        // Buckets answer few rows whatever the points they sum: only the scan bounds them.
        var limits = limits
        if step != nil { limits.maxPoints = max(limits.maxPoints, limits.maxScan) }
        let series = try history.series(name, path, from: fromSequence, to: max(fromSequence, toSequence), limits: limits,
                                        origins: audit)
        let head = Head(model: name, path: path.pointer, from: fromTime, to: toTime, through: series.through, step: step)
        return (csv ? Self.csv(series, step: step, audit: audit) : Self.json(series, head: head, audit: audit), series.through)
    }

    private struct Head {
        var model: String, path: String, from: Int64, to: Int64, through: UInt64, step: Int64?
    }

    private static func json(_ series: HistorySeries, head: Head, audit: Bool) -> [UInt8] {
        var answer: OrderedDictionary<String, JSON> = [
            "model": .string(head.model), "path": .string(head.path), "from": .string(HistoryTime.text(head.from)),
            "to": .string(HistoryTime.text(head.to)), "id": .string(String(head.through)),
        ]
        answer["start"] = series.start.map { .object(["value": $0]) } ?? .null
        if let step = head.step {
            answer["step"] = .string(HistoryUnits.text(milliseconds: step))
            answer["buckets"] = .array(Deque(series.buckets(step: step).map { bucket in
                .object(["time": .string(HistoryTime.text(bucket.time)), "count": .int(bucket.count), "first": bucket.first,
                         "last": bucket.last, "min": number(bucket.min), "max": number(bucket.max), "avg": number(bucket.average)])
            }))
        } else {
            answer["points"] = .array(Deque(series.points.map { point in
                var members: OrderedDictionary<String, JSON> = ["time": .string(HistoryTime.text(point.time)),
                                                                "id": .string(String(point.sequence))]
                if let value = point.value { members["value"] = value } else { members["removed"] = .bool(true) }
                if audit {
                    members["actor"] = point.origin?.actor.map(JSON.string) ?? .null
                    members["route"] = point.origin?.route.map(JSON.string) ?? .null
                }
                return .object(members)
            }))
        }
        return JSON.object(answer).encoded()
    }

    private static func number(_ value: Double?) -> JSON { value.map(JSON.double) ?? .null }

    private static func csv(_ series: HistorySeries, step: Int64?, audit: Bool) -> [UInt8] {
        var text = ""
        if let step {
            text = "time,count,first,last,min,max,avg\r\n"
            for bucket in series.buckets(step: step) {
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
