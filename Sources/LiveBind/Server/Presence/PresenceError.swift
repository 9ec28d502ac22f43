internal import LiveBindHTTP

/// Why a presence request is refused; nothing changed.
enum PresenceError: Error, Equatable, CustomStringConvertible {
    /// A room name a model name cannot hold.
    case invalidRoom(String)
    /// An entry's `meta` past `--max-presence-bytes`.
    case entryTooLarge(bytes: Int, limit: Int)
    /// The room holds `--max-presence-per-room` entries.
    case roomFull(String, limit: Int)
    /// The caller holds `--max-presence-per-caller` entries.
    case tooManyEntries(limit: Int)
    /// `onDisconnect` writes past `--max-disconnect-bytes`.
    case disconnectTooLarge(bytes: Int, limit: Int)
    /// More keys on one stream than ``PresenceRooms/Limits/keysPerStream``.
    case tooManyKeys(given: Int, limit: Int)
    /// A change to an entry without its key (`Presence-Key`).
    case keyMissing
    /// The key is not that of entry `id` in `room` (or the entry is gone).
    case notYours(room: String, id: String)
    /// A model of a room's name exists that is not a room (made before the prefix was reserved).
    case notARoom(String)
    /// A write to a room's model through `/models` or a binding: rooms change only through `/presence`.
    case roomWrittenDirectly(String)
    /// Presence needs a single node: the cluster shares one log, and rooms are a node's own.
    case notInCluster

    var description: String {
        switch self {
        case .invalidRoom(let room):
            "invalid room name \"\(room)\": use 1 to \(128 - EphemeralModels.prefix.count) characters from A-Z a-z 0-9 _ -"
        case .entryTooLarge(let bytes, let limit):
            "the entry's meta is \(bytes) bytes encoded, more than --max-presence-bytes (\(limit))"
        case .roomFull(let room, let limit):
            "room \"\(room)\" holds --max-presence-per-room entries (\(limit)); try again when someone leaves"
        case .tooManyEntries(let limit):
            "this caller holds --max-presence-per-caller entries (\(limit)); leave one first"
        case .tooManyKeys(let given, let limit):
            "\(given) presence keys on one stream; at most \(limit)"
        case .disconnectTooLarge(let bytes, let limit):
            "the disconnect writes are \(bytes) bytes, more than --max-disconnect-bytes (\(limit))"
        case .keyMissing:
            "send the entry's key, which joining gave, in the Presence-Key header"
        case .notYours(let room, let id):
            "entry \"\(id)\" of room \"\(room)\" is not this key's (or it has left): only the client that joined may change it"
        case .notARoom(let model):
            "the model \"\(model)\" is not a presence room (it has no members array): the presence- prefix is reserved for rooms; drop it"
        case .roomWrittenDirectly(let model):
            "\"\(model)\" is a presence room: it changes only through POST, PATCH and DELETE on /presence/{room}"
        case .notInCluster:
            "presence is not available with --cluster yet: rooms live on one node"
        }
    }

    /// The problem answered for it.
    var problem: Problem {
        var problem: Problem
        switch self {
        case .invalidRoom:
            problem = Problem(status: 400, kind: "invalid-room", title: "Bad Request", detail: description)
        case .entryTooLarge(_, let limit):
            problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: description)
            problem.limit = ("max-presence-bytes", limit)
        case .roomFull(_, let limit):
            problem = Problem(status: 503, kind: "room-full", title: "Service Unavailable", detail: description)
            problem.limit = ("max-presence-per-room", limit)
            problem.headers.add("Retry-After", "5")
        case .tooManyEntries(let limit):
            problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: description)
            problem.limit = ("max-presence-per-caller", limit)
        case .tooManyKeys:
            problem = Problem(status: 422, kind: "limit-exceeded", title: "Unprocessable Content", detail: description)
        case .disconnectTooLarge(_, let limit):
            problem = Problem(status: 413, kind: "limit-exceeded", title: "Content Too Large", detail: description)
            problem.limit = ("max-disconnect-bytes", limit)
        case .keyMissing:
            problem = Problem(status: 400, kind: "presence-key-missing", title: "Bad Request", detail: description)
        case .notYours:
            problem = Problem(status: 403, kind: "not-your-entry", title: "Forbidden", detail: description)
        case .notARoom, .roomWrittenDirectly:
            problem = Problem(status: 409, kind: "presence-room", title: "Conflict", detail: description)
        case .notInCluster:
            problem = Problem(status: 501, kind: "not-implemented", title: "Not Implemented", detail: description)
        }
        return problem
    }
}
