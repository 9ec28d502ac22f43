import FuzzDriver
import Glibc
@_spi(Fuzzing) import LiveBind

/// libFuzzer entry point: the input's lines up to the first line starting with `{` are `sub` values of
/// one `GET /events`; the rest is the body of a `PATCH /events/{stream}` for that stream. It must never
/// crash or hang, and:
/// - a `sub` value parses to a location or is refused with `invalidSubscription` or `windowTooLarge`;
///   a location's model is a model name, its window has 1 to `maxWindow` rows (`windowTooLarge` only
///   above), and its canonical `sub` value parses to the same location;
/// - a window shows at most its limit of rows, all inside the array;
/// - the stream opens exactly when every `sub` value parses (the route may still refuse overlapping
///   ones), with a `RequestError` otherwise; a window's snapshot holds the window's rows and says where
///   they are and how long the array is;
/// - the `PATCH` body moves a window or is refused with a `RequestError`; the moved window's snapshot
///   holds at most the rows asked for; after writes to the array, the window's events applied in order
///   to its last snapshot give the store's rows in the window and the array's length.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSubscription(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let split = lines.firstIndex { $0.hasPrefix("{") } ?? lines.endIndex
    let subs = lines[..<split].prefix(SubscriptionFixture.maxSubscriptions + 1).map(String.init)
    let body = split < lines.endIndex ? Array(lines[split...].joined(separator: "\n").utf8) : nil

    var allParse = true
    for sub in subs {
        do { check(try GrammarFuzzing.location(sub, maxWindow: SubscriptionFixture.maxWindow), written: sub) } catch {
            allParse = false
            switch error {
            case .invalidSubscription: break
            case .windowTooLarge(_, let rows, let limit):
                if rows <= limit || limit != SubscriptionFixture.maxWindow { fail("\(sub) refused as too large: \(error)") }
            default: fail("\(sub) refused with \(error)")
            }
        }
    }
    let streams = SubscriptionFixture.streams
    let opened: GrammarFuzzing.Streams.Opened
    do { opened = try streams.open(query: subs.map { ("sub", $0) }, headers: []) } catch {
        guard error is RequestError else { fail("GET /events refused with \(error), not a RequestError") }
        return 0
    }
    defer {
        streams.close(opened)
        SubscriptionFixture.reset()
    }
    if !allParse { fail("GET /events opened with a sub value that does not parse") }
    checkSnapshots(in: opened.preface)
    guard let body else { return 0 }
    var window = subs.lazy.compactMap { try? GrammarFuzzing.location($0, maxWindow: SubscriptionFixture.maxWindow) }
        .first { $0.model == "sensor" && $0.pointer == "/readings" }
    do {
        checkSnapshots(in: try streams.moveWindow(opened, body: body), moved: body)
        window = SubscriptionFixture.moved(body) ?? window
    } catch {
        guard error is RequestError else { fail("PATCH /events refused with \(error), not a RequestError") }
    }
    // Rows come and go; the window's events, applied in order to its last snapshot, give its rows now.
    let store = streams.store
    do {
        _ = try store.append(99, to: SubscriptionFixture.readings, in: "sensor")
        _ = try store.remove(at: SubscriptionFixture.readings.appending("0"), in: "sensor")
        _ = try store.insert(-1, at: 3, in: SubscriptionFixture.readings, of: "sensor")
        _ = try store.move(from: 0, to: 5, in: SubscriptionFixture.readings, of: "sensor")
    } catch {
        fail("the fixture's writes were refused: \(error)")
    }
    guard let window, let array = (try? store.value(of: "sensor", at: SubscriptionFixture.readings))?.arrayValue else { return 0 }
    let events = SubscriptionFixture.typedEvents(in: streams.held(opened))
    guard let shown = SubscriptionFixture.replay(events, model: "sensor", path: "/readings") else { return 0 }
    let rows = window.rows(length: array.count)  // empty past the end (an `offset` window keeps its offset)
    let expected = rows.isEmpty ? [] : Array(array[rows])
    if shown.rows != expected || shown.length != array.count {
        fail("after the writes the window's events give \(shown), the store's window is \(expected) of \(array.count) rows")
    }
    return 0
}

/// A parsed location's bounds and round trip.
func check(_ location: GrammarFuzzing.Location, written: String) {
    let name = location.model.utf8
    if name.isEmpty || name.count > 128
        || !name.allSatisfy({
            $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0)
                || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
        })
    {
        fail("\(written) named model '\(location.model)'")
    }
    if let limit = location.limit, !(1...SubscriptionFixture.maxWindow).contains(limit) { fail("\(written) has a window of \(limit) rows") }
    if let offset = location.offset, offset < 0 || location.limit == nil { fail("\(written) has offset \(offset)") }
    guard let again = try? GrammarFuzzing.location(location.text, maxWindow: SubscriptionFixture.maxWindow), again == location else {
        fail("\(written) reads as \(location.text), which does not read back as the same location")
    }
    for length in [0, 1, 7, 20, 10_000, Int.max] {
        let rows = location.rows(length: length)
        if rows.lowerBound < 0 || (!rows.isEmpty && rows.upperBound > length) || rows.count > (location.limit ?? length) {
            fail("\(written) shows rows \(rows) of an array of \(length)")
        }
    }
}

/// Every window snapshot shows its rows as the store has them; `moved` is a PATCH body that asked for
/// a number of rows.
func checkSnapshots(in text: String, moved body: [UInt8]? = nil) {
    let snapshots = SubscriptionFixture.events(in: text).filter { $0["window"] != nil && $0["path"] != nil }
    for snapshot in snapshots {
        guard case .string(let model)? = snapshot["model"], case .string(let pointer)? = snapshot["path"],
            case .int(let offset)? = snapshot["window"]?["offset"], case .int(let length)? = snapshot["window"]?["length"],
            case .array(let rows)? = snapshot["value"]
        else {
            continue  // changes and `length` events; their shape is another target's business
        }
        let array = (try? SubscriptionFixture.streams.store.value(of: model, at: Path(pointer: pointer)))?.arrayValue
        if length != (array?.count ?? 0) || rows.count > SubscriptionFixture.maxWindow || offset < 0 {
            fail("snapshot \(snapshot) of an array of \(array?.count ?? 0) rows")
        }
        if let array, !rows.isEmpty, offset + rows.count > array.count || !rows.elementsEqual(array[offset..<offset + rows.count]) {
            fail("snapshot \(snapshot) does not hold the array's rows from \(offset)")
        }
    }
    if let body, let asked = try? JSON(parsing: body), let last = snapshots.last, case .array(let rows)? = last["value"] {
        let limit = asked["first"]?.doubleValue ?? asked["last"]?.doubleValue ?? asked["limit"]?.doubleValue ?? .infinity
        if Double(rows.count) > limit { fail("PATCH \(asked) moved the window to \(rows.count) rows") }
    }
}

enum SubscriptionFixture {
    static let maxWindow = 100
    static let maxSubscriptions = 8
    static let readings = Path(["readings"])
    static let sensor: JSON = [
        "readings": .array(.init((0..<20).map { JSON.int($0) })), "name": "probe",
        "rows": [["v": [1, 2, 3]], ["v": []]], "empty": [], "a/b": ["~": [1, 2]]
    ]
    static let panel: JSON = ["items": ["a", "b", "c"], "label": "x"]

    /// One hub for every input (a stream is closed after its input); a window of at most 100 rows.
    static let streams: GrammarFuzzing.Streams = {
        let streams = GrammarFuzzing.Streams(retainedEvents: 64, maxWindow: maxWindow, maxSubscriptions: maxSubscriptions)
        do { try streams.store.put("panel", panel) } catch { fail("the fixture's models were refused: \(error)") }
        reset(streams)
        return streams
    }()

    /// Puts the sensor model back as it was, so inputs do not grow it.
    static func reset(_ streams: GrammarFuzzing.Streams = streams) {
        do { try streams.store.put("sensor", sensor) } catch { fail("the fixture's models were refused: \(error)") }
    }

    /// The window a `PATCH /events/{stream}` body asks for on `sensor/readings`, read as a `sub` value.
    static func moved(_ body: [UInt8]) -> GrammarFuzzing.Location? {
        guard let asked = try? JSON(parsing: body), asked["sub"] == "sensor/readings" else { return nil }
        let size: (String) -> Int? = { name in asked[name]?.doubleValue.flatMap { Int(exactly: $0) } }
        var text = "sensor/readings"
        if let first = size("first") {
            text += ";first=\(first)"
        } else if let last = size("last") {
            text += ";last=\(last)"
        } else if let limit = size("limit") {
            text += ";offset=\(size("offset") ?? 0);limit=\(limit)"
        }  // as `sub=` reads it
        return try? GrammarFuzzing.location(text, maxWindow: maxWindow)
    }

    /// The rows and array length a client holds after applying `events` from the last snapshot of the
    /// window at `path` of `model`, as docs/HTTP.md says: nil when there is no such snapshot.
    static func replay(_ events: [(type: String, data: JSON)], model: String, path: String) -> (rows: [JSON], length: Int)? {
        guard
            let start = events.lastIndex(where: {
                $0.type == "snapshot" && $0.data["model"] == .string(model)
                    && $0.data["path"] == .string(path) && $0.data["window"] != nil
            }),
            let value = events[start].data["value"]?.arrayValue,
            case .int(var length)? = events[start].data["window"]?["length"]
        else {
            return nil
        }
        var rows = Array(value)
        for (type, event) in events[(start + 1)...] where event["model"] == .string(model) && event["window"] != nil {
            let changes = event["changes"]?.arrayValue.map(Array.init) ?? [event]
            guard changes.contains(where: { $0["path"] == .string(path) }) else { continue }
            if case .int(let now)? = event["window"]?["length"] { length = now }
            for change in changes where change["path"] == .string(path) {
                let index = change["index"].flatMap { if case .int(let i) = $0 { i } else { nil } }
                let kind = change["kind"].flatMap { if case .string(let kind) = $0 { kind } else { nil } } ?? type
                switch (kind, index) {
                case ("insert", let i?) where (0...rows.count).contains(i): rows.insert(change["value"] ?? .null, at: i)
                case ("remove", let i?) where rows.indices.contains(i): rows.remove(at: i)
                case ("replace", let i?) where rows.indices.contains(i): rows[i] = change["value"] ?? .null
                case ("move", _):
                    guard case .int(let from)? = change["from"], case .int(let to)? = change["to"],
                        rows.indices.contains(from), rows.indices.contains(to)
                    else { fail("a move outside the window: \(event)") }
                    rows.insert(rows.remove(at: from), at: to)
                case ("set", _), ("snapshot", _): rows = change["value"]?.arrayValue.map(Array.init) ?? []
                case ("length", _): break
                default: fail("an event the window cannot apply: \(event) to \(rows.count) rows")
                }
            }
        }
        return (rows, length)
    }

    /// The type and `data` of each event in `text` (Server-Sent Events).
    static func typedEvents(in text: String) -> [(type: String, data: JSON)] {
        var events: [(type: String, data: JSON)] = []
        var type = "message"
        for line in text.split(separator: "\n") {
            if line.hasPrefix("event: ") { type = String(line.dropFirst(7)) }
            guard line.hasPrefix("data: ") else { continue }
            guard let value = try? JSON(parsing: String(line.dropFirst(6))) else { fail("an event's data is not JSON: \(line)") }
            events.append((type, value))
            type = "message"
        }
        return events
    }

    /// The `data` of each event in `text` (Server-Sent Events), as JSON.
    static func events(in text: String) -> [JSON] {
        var events: [JSON] = []
        for line in text.split(separator: "\n") where line.hasPrefix("data: ") {
            guard let value = try? JSON(parsing: String(line.dropFirst(6))) else { fail("an event's data is not JSON: \(line)") }
            events.append(value)
        }
        return events
    }
}

/// Process entry: SwiftPM names an executable's entry `FuzzSubscription_main`; hand it to libFuzzer's driver.
@_cdecl("FuzzSubscription_main")
public func fuzzSubscriptionMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzSubscription)
}
