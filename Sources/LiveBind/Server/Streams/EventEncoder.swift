import LiveBindEngine
/// Turns commits, snapshots and stream notices into SSE frames: `id:`, `event:`, one `data:` line.
///
/// JSON text never contains a raw newline, so each event's data is exactly one `data:` line.
enum EventEncoder {
    /// The frame for one commit: a change event, a `batch`, a `snapshot` or a `drop`.
    static func frame(for commit: Commit) -> EventFrame {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128)
        switch commit.kind {
        case .changes(let changes) where changes.count == 1:
            header(sequence: commit.eventID, event: changes[0].kind.rawValue, into: &bytes)
            bytes += #"{"model":"#.utf8
            JSON.string(commit.model).encode(into: &bytes)
            bytes += #","rev":"#.utf8
            bytes.appendDecimal(commit.revision)
            bytes.append(UInt8(ascii: ","))
            appendFields(of: changes[0], into: &bytes)
            bytes += "}\n\n".utf8
        case .changes(let changes):
            header(sequence: commit.eventID, event: "batch", into: &bytes)
            bytes += #"{"model":"#.utf8
            JSON.string(commit.model).encode(into: &bytes)
            bytes += #","rev":"#.utf8
            bytes.appendDecimal(commit.revision)
            bytes += #","changes":["#.utf8
            for (position, change) in changes.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += #"{"kind":"\#(change.kind.rawValue)","#.utf8
                appendFields(of: change, into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes += "]}\n\n".utf8
        case .snapshot(let value):
            appendSnapshot(
                ModelSnapshot(name: commit.model, revision: commit.revision, value: value),
                sequence: commit.eventID, into: &bytes)
        case .drop:
            header(sequence: commit.eventID, event: "drop", into: &bytes)
            bytes += #"{"model":"#.utf8
            JSON.string(commit.model).encode(into: &bytes)
            bytes += #","rev":"#.utf8
            bytes.appendDecimal(commit.revision)
            bytes.append(UInt8(ascii: "}"))
            bytes += "\n\n".utf8
        }
        return EventFrame(sequence: commit.sequence, id: commit.eventID, model: commit.model, isCommit: true, bytes: bytes)
    }

    /// A `snapshot` event for one model, with the id of the cut it belongs to (`id: false`: without the
    /// `id:` line, for all but the last event of a cut).
    static func appendSnapshot(_ snapshot: ModelSnapshot, sequence: UInt64, id: Bool = true, into bytes: inout [UInt8]) {
        header(sequence: sequence, event: "snapshot", id: id, into: &bytes)
        bytes += #"{"model":"#.utf8
        JSON.string(snapshot.name).encode(into: &bytes)
        bytes += #","rev":"#.utf8
        bytes.appendDecimal(snapshot.revision)
        bytes += #","value":"#.utf8
        snapshot.value.encode(into: &bytes)
        bytes += "}\n\n".utf8
    }

    /// The first bytes of every stream: how long a browser waits before reconnecting.
    static func retry(milliseconds: Int) -> [UInt8] { Array("retry: \(milliseconds)\n\n".utf8) }

    /// A `resync` event: the client must drop its state; snapshots follow.
    static func resync(_ reason: ResyncReason) -> [UInt8] {
        Array("event: resync\ndata: {\"reason\":\"\(reason.rawValue)\"}\n\n".utf8)
    }

    /// An `auth_revoked` event: the stream's credential expired (`expired`) or its session ended
    /// (`session-ended`); the stream ends after it. No id, so a client resumes from its last event.
    static func authRevoked(_ reason: String) -> [UInt8] {
        Array("event: auth_revoked\ndata: {\"reason\":\"\(reason)\"}\n\n".utf8)
    }

    /// A heartbeat comment: keeps proxies and the connection-loss check alive.
    static let heartbeat: [UInt8] = Array(": heartbeat\n\n".utf8)

    static func header(sequence: UInt64, event: String, id: Bool = true, into bytes: inout [UInt8]) {
        if id {
            bytes += "id: ".utf8
            bytes.appendDecimal(sequence)
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes += "event: ".utf8
        bytes += event.utf8
        bytes += "\ndata: ".utf8
    }

    /// The path as a JSON string of its JSON Pointer. Components that neither the pointer (`~`, `/`)
    /// nor JSON (see `JSONWriter.needsEscape`) escapes, which is most of them, go straight into the bytes.
    static func appendPointer(_ path: Path, into bytes: inout [UInt8]) {
        let plain = path.components.allSatisfy { component in
            component.utf8.allSatisfy { $0 != UInt8(ascii: "~") && $0 != UInt8(ascii: "/") && !JSONWriter.needsEscape($0) }
        }
        guard plain else { return JSON.string(path.pointer).encode(into: &bytes) }
        bytes.append(UInt8(ascii: "\""))
        for component in path.components {
            bytes.append(UInt8(ascii: "/"))
            bytes += component.utf8
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"path":…` and the members the change kind has, without braces.
    static func appendFields(of change: Change, into bytes: inout [UInt8]) {
        bytes += #""path":"#.utf8
        appendPointer(change.path, into: &bytes)
        if let index = change.index {
            bytes += #","index":"#.utf8
            bytes.appendDecimal(index)
        }
        if let from = change.from {
            bytes += #","from":"#.utf8
            bytes.appendDecimal(from)
        }
        if let to = change.to {
            bytes += #","to":"#.utf8
            bytes.appendDecimal(to)
        }
        if let key = change.key {
            bytes += #","key":"#.utf8
            key.encode(into: &bytes)
        }
        if let value = change.value {
            bytes += #","value":"#.utf8
            value.encode(into: &bytes)
        }
    }
}

/// Why a stream starts over with fresh snapshots.
enum ResyncReason: String, Sendable {
    /// The client's `Last-Event-ID` is older than the retained events.
    case gap
    /// The client's `Last-Event-ID` is from before a server restart (newer than anything here).
    case restart
    /// The client fell so far behind that the events it had not read were discarded.
    case lagging
}
