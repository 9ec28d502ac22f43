/// One event of a `text/event-stream` body (the WHATWG Server-Sent Events format).
struct ServerSentEvent: Sendable, Equatable {
    /// The `id:` field, when the event has one (LiveBind puts it on the last event of a group).
    var id: String?
    /// The `event:` field; `message` when there is none.
    var name: String
    /// The `data:` lines, joined with newlines.
    var data: String
}

/// Turns the bytes of an event stream, in chunks cut anywhere, into events: lines end with CR, LF or
/// CRLF (a CRLF split between two chunks is one end), `:` starts a comment (a heartbeat), an empty
/// line ends an event. A line, or an event's data, longer than `maxLineBytes` ends the stream as
/// malformed: the server's events are bounded by its own limits (a model's size), so anything longer
/// is not a LiveBind server, and the client's memory stays bounded.
struct EventStreamParser {
    enum Failure: Error, Equatable { case lineTooLong(Int) }

    let maxLineBytes: Int
    private var dataBytes = 0
    private var failed = false
    private var line: [UInt8] = []
    private var afterCR = false
    private var id: String?
    private var name: String?
    private var data: [String] = []
    private var started = false

    init(maxLineBytes: Int = 64 << 20) {
        self.maxLineBytes = maxLineBytes
    }

    /// The events the chunk completes, in order.
    mutating func feed(_ chunk: some Sequence<UInt8>) throws(Failure) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in chunk {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                afterCR = byte == UInt8(ascii: "\r")
                if let event = endLine() { events.append(event) }
                if failed { throw .lineTooLong(maxLineBytes) }
            default:
                guard line.count < maxLineBytes else { throw .lineTooLong(maxLineBytes) }
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if !started {
            started = true
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        guard !line.isEmpty else {
            defer { id = nil; name = nil; data = []; dataBytes = 0 }
            guard id != nil || name != nil || !data.isEmpty else { return nil }
            return ServerSentEvent(id: id, name: name ?? "message", data: data.joined(separator: "\n"))
        }
        guard line.first != UInt8(ascii: ":") else { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        let field = String(decoding: line[..<colon], as: UTF8.self)
        var valueStart = colon < line.endIndex ? colon + 1 : colon
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = String(decoding: line[valueStart...], as: UTF8.self)
        switch field {
        case "data":
            dataBytes += line.count
            guard dataBytes <= maxLineBytes else {
                failed = true
                return nil
            }
            data.append(value)
        case "event": name = value
        case "id" where !value.contains("\0"): id = value
        default: break
        }
        return nil
    }
}
