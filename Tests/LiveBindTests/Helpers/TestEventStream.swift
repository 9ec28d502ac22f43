import Foundation
import LiveBindEngine
import Testing

/// One Server-Sent Event as the HTML spec's parser dispatches it.
struct TestEvent: CustomStringConvertible {
    /// The stream's last event id once this event is dispatched (the spec's `lastEventId`).
    var id: String?
    var type: String
    var data: String
    /// The event's own `id:` field; nil when it has none (it then belongs to the group the next id closes).
    var ownID: String? = nil

    /// The data parsed as a JSON object.
    func object() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            throw TestSocketError(description: "event data is not an object: \(data)")
        }
        return object
    }

    var description: String { "\(type)#\(id ?? "-") \(data)" }
}

/// An open `GET /events` stream read incrementally: chunked decoding, then the SSE line parser
/// (`id:`, `event:`, `data:`, `retry:`, comments; CRLF, LF or CR line ends; one optional space after ':').
final class TestEventStream {
    let socket: TestSocket
    let status: Int
    let headers: [(name: String, value: String)]
    /// The `retry:` value last seen, in milliseconds.
    private(set) var retry: Int?
    /// Comment lines seen so far (heartbeats), without the leading colon.
    private(set) var comments: [String] = []
    /// The last event id the stream set (what a browser would send as `Last-Event-ID`).
    private(set) var lastEventID: String?
    /// The body of a non-stream answer (a 503 problem), when the status is not 200.
    private(set) var errorBody: [UInt8] = []
    private var pending: [UInt8] = []
    /// How many bytes at the start of `pending` are known to hold no line end: a long line arriving
    /// in many chunks is scanned once, not once per chunk.
    private var scanned = 0
    private var ended = false

    /// Opens `target` (such as `/events?model=a`) with optional extra headers.
    init(
        port: Int, target: String = "/events", headers: [(String, String)] = [], timeout: Double = 10,
        receiveBufferSize: Int32? = nil
    ) throws {
        socket = try TestSocket(port: port, timeout: timeout, receiveBufferSize: receiveBufferSize)
        var head = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try socket.send(head + "\r\n")
        (status, self.headers) = try TestHTTPClient.readHead(from: socket)
        if status != 200 {
            let rest = TestHTTPResponse(status: status, headers: self.headers, body: [])
            if let length = rest.header("Content-Length").flatMap({ Int($0) }) {
                errorBody = try socket.read(count: length)
            }
            ended = true
        }
    }

    /// The next event; nil when the stream ended. Throws when nothing complete arrives within the timeout.
    func next() throws -> TestEvent? {
        var id: String?
        var type = ""
        var data: [String] = []
        var sawData = false
        while true {
            guard let line = try nextLine() else { return nil }
            if line.isEmpty {
                if sawData {
                    return TestEvent(
                        id: id ?? lastEventID, type: type.isEmpty ? "message" : type,
                        data: data.joined(separator: "\n"), ownID: id)
                }
                type = ""
                continue
            }
            if line.hasPrefix(":") { comments.append(String(line.dropFirst())); continue }
            let field: Substring
            var value: Substring
            if let colon = line.firstIndex(of: ":") {
                field = line[..<colon]
                value = line[line.index(after: colon)...]
                if value.first == " " { value = value.dropFirst() }
            } else {
                field = Substring(line)
                value = ""
            }
            switch field {
            case "data": data.append(String(value)); sawData = true
            case "event": type = String(value)
            case "id" where !value.contains("\0"): lastEventID = String(value); id = String(value)
            case "retry": if let number = Int(value) { retry = number }
            default: break
            }
        }
    }

    /// The next `count` events; fails when the stream ends first.
    func next(_ count: Int) throws -> [TestEvent] {
        try (0..<count).map { _ in
            guard let event = try next() else { throw TestSocketError(description: "stream ended early") }
            return event
        }
    }

    /// Reads until `count` comment lines have been seen in total (heartbeats); events in between are returned.
    func waitForComments(_ count: Int) throws -> [TestEvent] {
        var events: [TestEvent] = []
        while comments.count < count {
            guard let line = try nextLine() else { throw TestSocketError(description: "stream ended") }
            if line.hasPrefix(":") {
                comments.append(String(line.dropFirst()))
            } else if !line.isEmpty {
                events.append(TestEvent(id: nil, type: "partial", data: line))
            }
        }
        return events
    }

    /// One SSE line (without its end), decoding chunks as needed; nil at the end of the stream.
    private func nextLine() throws -> String? {
        while true {
            if let end = pending[scanned...].firstIndex(where: { $0 == 10 || $0 == 13 }) {
                if pending[end] == 13 {
                    if end + 1 == pending.count, !ended, try fillPending() {
                        scanned = end
                        continue
                    }
                    let skip = end + 1 < pending.count && pending[end + 1] == 10 ? 2 : 1
                    defer { pending.removeFirst(end + skip); scanned = 0 }
                    return String(decoding: pending[..<end], as: UTF8.self)
                }
                defer { pending.removeFirst(end + 1); scanned = 0 }
                return String(decoding: pending[..<end], as: UTF8.self)
            }
            scanned = pending.count
            guard !ended, try fillPending() else { return nil }
        }
    }

    private func fillPending() throws -> Bool {
        guard let chunk = try TestHTTPClient.readChunk(from: socket) else { ended = true; return false }
        pending += chunk
        return true
    }
}

extension TestEventStream {
    /// The 2 kB tail of every value `fallBehind` writes.
    static let lagFiller = String(repeating: "x", count: 2048)

    /// Makes this stream fall behind the log: 3,000 writes of a value ending in ``lagFiller`` to `/v` of
    /// `model`, then reads until a `resync` comes, expecting its reason `lagging`. Returns the first event
    /// after it that is no resync (the stream may fall behind again while its fresh snapshot is encoded,
    /// on a slow build: then another resync comes first), nil when no resync came (an expectation fails).
    func fallBehind(writingTo model: String, in store: Store) throws -> TestEvent? {
        for value in 0..<3000 { try store.set(.string("\(value)\(Self.lagFiller)"), at: Path(pointer: "/v"), in: model) }
        for _ in 0..<3100 {
            guard let event = try next() else { break }
            guard event.type == "resync" else { continue }
            #expect(try event.object()["reason"] as? String == "lagging")
            var after = try next()
            while after?.type == "resync" { after = try next() }
            return after
        }
        Issue.record("no resync came")
        return nil
    }
}
