import LiveBindEngine
/// The answer of `?history`, written while the series is read (``HistoryDatabase`` emits each point
/// as it finds it): JSON or CSV, points or buckets.
///
/// It holds the bytes written so far, the point or bucket being written, and one open bucket. Each
/// point or bucket is written apart first and refused (422) when it would take the answer past
/// `maxBytes` (`--history-max-bytes`), before it is copied in: the points and buckets limits count
/// values, and a value may be a whole document, so without it one query could hold any multiple of a
/// model's size.
struct HistoryAnswer {
    /// What the JSON answer says before its points.
    struct Head {
        var model: String, path: String, from: Int64, to: Int64
    }

    let head: Head
    let step: Int64?
    let csv: Bool
    /// With `&audit`, the models the caller may audit (see ``visible(_:to:)``); nil: no audit.
    let audit: AccessControl.Reach?
    let maxBytes: Int
    /// The answer so far: never more than `maxBytes`.
    private var written: [UInt8] = []
    /// The point or bucket being written.
    private var piece: [UInt8] = []
    /// The last event the answer covers.
    private(set) var through: UInt64 = 0
    private var times = HistoryTime.Writer()
    private var open: HistorySeries.Bucket?
    private var empty = true

    init(head: Head, step: Int64?, csv: Bool, audit: AccessControl.Reach?, maxBytes: Int) {
        self.head = head
        self.step = step
        self.csv = csv
        self.audit = audit
        self.maxBytes = maxBytes
    }

    /// Writes what comes before the points: the head and `start` (JSON), or the header row (CSV).
    mutating func begin(start: JSON?, through: UInt64) throws {
        self.through = through
        if csv {
            piece +=
                step != nil
                ? "time,count,first,last,min,max,avg\r\n".utf8
                : audit != nil ? "time,id,value,actor,route\r\n".utf8 : "time,id,value\r\n".utf8
            return try flush()
        }
        piece += #"{"model":"#.utf8
        JSON.string(head.model).encode(into: &piece)
        piece += #","path":"#.utf8
        JSON.string(head.path).encode(into: &piece)
        piece += #","from":""#.utf8
        times.append(head.from, to: &piece)
        piece += #"","to":""#.utf8
        times.append(head.to, to: &piece)
        piece += #"","id":""#.utf8
        piece.appendDecimal(through)
        piece += #"","start":"#.utf8
        if let start {
            piece += #"{"value":"#.utf8
            start.encode(into: &piece)
            piece.append(UInt8(ascii: "}"))
        } else {
            piece += "null".utf8
        }
        if let step {
            piece += #","step":"#.utf8
            JSON.string(HistoryUnits.text(milliseconds: step)).encode(into: &piece)
            piece += #","buckets":["#.utf8
        } else {
            piece += #","points":["#.utf8
        }
        try flush()
    }

    /// Writes `point`, or puts it in its bucket (writing the bucket before when it is in the next).
    mutating func add(_ point: HistorySeries.Point) throws {
        guard let step else {
            writePoint(point)
            return try flush()
        }
        guard let value = point.value else { return }  // a removal is in no bucket
        let start = point.time - ((point.time % step) + step) % step
        if let bucket = open, bucket.time != start {
            write(bucket)
            open = nil
            try flush()
        }
        if open == nil { open = HistorySeries.Bucket(time: start, first: value, last: value) }
        open!.add(value)
    }

    /// The whole answer.
    mutating func finish() throws -> [UInt8] {
        if let bucket = open { write(bucket) }
        open = nil
        if !csv { piece += "]}".utf8 }
        try flush()
        return written
    }

    /// Moves the piece written into the answer, unless it would take it past the limit.
    private mutating func flush() throws {
        try Self.append(piece, to: &written, limit: maxBytes) {
            "the answer holds more than \(maxBytes) bytes; ask for a shorter range, a longer step or a location inside the document"
        }
        piece.removeAll(keepingCapacity: true)
    }

    /// Appends `more` to `bytes`, or throws (422, `--history-max-bytes`) when that would take them past
    /// `limit`: checked before a byte is copied, and `bytes` grows by doubling but never past the limit,
    /// so an answer holds at most about the limit once (a doubling copy holds one and a half times).
    static func append(_ more: [UInt8], to bytes: inout [UInt8], limit: Int, needed: () -> String) throws {
        let count = bytes.count + more.count
        guard count <= limit else { throw HistoryError.limit(flag: "history-max-bytes", limit: limit, needed: needed()) }
        if count > bytes.capacity { bytes.reserveCapacity(min(max(count, bytes.capacity * 2), limit)) }
        bytes += more
    }

    private mutating func separate() {
        if !empty && !csv { piece.append(UInt8(ascii: ",")) }
        empty = false
    }

    private mutating func writePoint(_ point: HistorySeries.Point) {
        separate()
        let origin = audit.flatMap { Self.visible(point.origin, to: $0) }
        if csv {
            times.append(point.time, to: &piece)
            piece.append(UInt8(ascii: ","))
            piece.appendDecimal(point.sequence)
            piece.append(UInt8(ascii: ","))
            if let value = point.value { field(value) }
            if audit != nil {
                piece.append(UInt8(ascii: ","))
                quoted(Array((origin?.actor ?? "").utf8))
                piece.append(UInt8(ascii: ","))
                quoted(Array((origin?.route ?? "").utf8))
            }
            piece += "\r\n".utf8
            return
        }
        piece += #"{"time":""#.utf8
        times.append(point.time, to: &piece)
        piece += #"","id":""#.utf8
        piece.appendDecimal(point.sequence)
        if let value = point.value {
            piece += #"","value":"#.utf8
            value.encode(into: &piece)
        } else {
            piece += #"","removed":true"#.utf8
        }
        if audit != nil {
            piece += #","actor":"#.utf8
            (origin?.actor.map(JSON.string) ?? .null).encode(into: &piece)
            piece += #","route":"#.utf8
            (origin?.route.map(JSON.string) ?? .null).encode(into: &piece)
        }
        piece.append(UInt8(ascii: "}"))
    }

    private mutating func write(_ bucket: HistorySeries.Bucket) {
        separate()
        let numbers = [bucket.min, bucket.max, bucket.average]
        if csv {
            times.append(bucket.time, to: &piece)
            piece.append(UInt8(ascii: ","))
            piece.appendDecimal(UInt64(bucket.count))
            piece.append(UInt8(ascii: ","))
            field(bucket.first)
            piece.append(UInt8(ascii: ","))
            field(bucket.last)
            for number in numbers {
                piece.append(UInt8(ascii: ","))
                if let number { piece += "\(number)".utf8 }
            }
            piece += "\r\n".utf8
            return
        }
        piece += #"{"time":""#.utf8
        times.append(bucket.time, to: &piece)
        piece += #"","count":"#.utf8
        piece.appendDecimal(UInt64(bucket.count))
        piece += #","first":"#.utf8
        bucket.first.encode(into: &piece)
        piece += #","last":"#.utf8
        bucket.last.encode(into: &piece)
        for (name, number) in zip(["min", "max", "avg"], numbers) {
            piece += ",\"\(name)\":".utf8
            (number.map(JSON.double) ?? .null).encode(into: &piece)
        }
        piece.append(UInt8(ascii: "}"))
    }

    /// A value as a CSV field: its JSON text, quoted when it needs to be (RFC 4180).
    private mutating func field(_ value: JSON) {
        quoted(value.encoded())
    }

    private static let special: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "\""), UInt8(ascii: "\n"), UInt8(ascii: "\r")]

    private mutating func quoted(_ text: [UInt8]) {
        guard text.contains(where: Self.special.contains) else {
            piece += text
            return
        }
        piece.append(UInt8(ascii: "\""))
        for byte in text {
            piece.append(byte)
            if byte == UInt8(ascii: "\"") { piece.append(byte) }
        }
        piece.append(UInt8(ascii: "\""))
    }

    /// Who made a change, as a caller who may audit the models `reach` covers may see it.
    ///
    /// A binding carries its source write's origin into its target. The route names the model that
    /// write went to (`PUT /models/hr-salaries/x`): when the caller may not audit that model, the
    /// change shows as `binding`, with no route, and says nothing of the write in a model they cannot
    /// audit. A route that names no model (`PATCH /models`, `POST /bindings`) shows only when no
    /// binding carried the change, or when the caller may audit every model.
    static func visible(_ origin: CommitOrigin?, to reach: AccessControl.Reach) -> CommitOrigin? {
        guard let origin, reach != .everything else { return origin }
        if let model = origin.route.flatMap(routedModel) {
            return reach.covers(model) ? origin : carried
        }
        return origin.carried ? carried : origin
    }

    /// What a caller sees of a change a binding carried from a model they may not audit.
    static let carried = CommitOrigin(actor: "binding", route: nil)

    /// The model a route's path names: `NAME` of `METHOD /models/NAME[/…]`.
    private static func routedModel(_ route: String) -> String? {
        guard let space = route.firstIndex(of: " ") else { return nil }
        let path = route[route.index(after: space)...]
        guard path.hasPrefix("/models/") else { return nil }
        let rest = path.dropFirst("/models/".count)
        let name = rest.prefix { $0 != "/" }
        return name.isEmpty ? nil : String(name)
    }
}
