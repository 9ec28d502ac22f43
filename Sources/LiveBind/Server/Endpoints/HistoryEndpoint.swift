import Foundation
import LiveBindEngine
internal import LiveBindHTTP

/// `GET /models/{name}{pointer}?history` (a location's past values, raw or in buckets, optionally with
/// who made each change) and `?at=` (a document as it was), read from the data directory's history
/// (``HistoryDatabase``) without the store's lock.
struct HistoryEndpoint: Sendable {
    /// nil when the server keeps no history.
    let history: HistoryDatabase?
    let limits: HistoryDatabase.Limits
    /// `--history-max-buckets`.
    let maxBuckets: Int
    /// `--history-max-bytes`: the most one answer holds, counted as it is written.
    let maxBytes: Int

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
        throw .badRequest(
            """
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
        let bytes = value.encoded()
        guard bytes.count <= maxBytes else {
            throw HistoryError.limit(
                flag: "history-max-bytes", limit: maxBytes,
                needed:
                    "\(path.components.isEmpty ? "the model" : "the value at " + path.pointer) was \(bytes.count) bytes then; read a location inside it"
            )
        }
        var response = HTTPResponse.bytes(bytes, contentType: RequestBody.json)
        response.headers.add("ETag", "\"\(document.revision)\"")
        response.headers.add(ModelEndpoint.eventIDHeader, "\(sequence)")
        return response
    }

    // MARK: ?history

    /// `GET /models/{name}{pointer}?history[&from=…][&to=…][&step=…][&audit]`; `audit`, with `&audit`,
    /// the models the caller may audit.
    func series(_ name: String, _ pointer: String, _ request: HTTPRequest, audit: AccessControl.Reach?) throws -> HTTPResponse {
        let history = try database()
        let to = try request.queryValue("to").map { text throws(RequestError) in try Self.point(text, parameter: "to") }
        let from = try request.queryValue("from").map { text throws(RequestError) in try Self.point(text, parameter: "from") }
        let csv = request.headers.values(of: "Accept").contains { $0.contains("text/csv") }
        let (bytes, through) = try answer(
            name, pointer, from: from, to: to, step: request.queryValue("step"), audit: audit,
            csv: csv, history: history)
        var response = HTTPResponse.bytes(bytes, contentType: csv ? "text/csv; charset=utf-8" : RequestBody.json)
        response.headers.add(ModelEndpoint.eventIDHeader, "\(through)")
        return response
    }

    /// The buckets of `pointer` from `from` through event `through`, as `?history&step=` answers them
    /// in JSON, and the last event they cover.
    func buckets(_ name: String, _ pointer: String, from: Point, step: String, through: UInt64) throws -> (bytes: [UInt8], through: UInt64)
    {
        try answer(name, pointer, from: from, to: .event(through), step: step, audit: nil, csv: false, history: try database())
    }

    private func answer(
        _ name: String, _ pointer: String, from: Point?, to: Point?, step text: String?, audit: AccessControl.Reach?, csv: Bool,
        history: HistoryDatabase
    ) throws -> (bytes: [UInt8], through: UInt64) {
        let path = try Path(pointer: pointer)
        var step: Int64?
        if let text {
            guard let milliseconds = HistoryUnits.milliseconds(Substring(text)), milliseconds > 0,
                milliseconds <= Self.times.upperBound - Self.times.lowerBound
            else {
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
                throw HistoryError.limit(
                    flag: "history-max-buckets", limit: maxBuckets,
                    needed:
                        "from … to in steps of \(HistoryUnits.text(milliseconds: step)) is \(buckets) buckets; take a longer step or a shorter range"
                )
            }
        }
        var answer = HistoryAnswer(
            head: .init(model: name, path: path.pointer, from: fromTime, to: toTime), step: step, csv: csv,
            audit: audit, maxBytes: maxBytes)
        try history.series(
            name, path, from: fromSequence, to: max(fromSequence, toSequence), countingPoints: step == nil,
            limits: limits, origins: audit != nil
        ) { start, through in
            try answer.begin(start: start, through: through)
        } emit: { point in
            try answer.add(point)
        }
        return (try answer.finish(), answer.through)
    }
}
