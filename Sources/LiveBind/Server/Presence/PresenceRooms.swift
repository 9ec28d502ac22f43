import Foundation
import LiveBindEngine

/// Who is in each presence room, and when each entry leaves.
///
/// Room `lobby` is the model `presence-lobby`: `{"members": [entry, …]}`, one entry per join,
/// `{"id", "who", "joined", "meta"}`, so joins and leaves reach streams as an array's inserts and
/// removes. A join gives its client the entry's `key`, the secret that claims the entry for a stream
/// (`GET /events?presence=KEY`), updates its `meta` and leaves. An entry no open stream holds leaves
/// after the grace period (a stream that reconnects within it keeps the entry), and at once when its
/// credential ends. A room exists while someone is in it: the last to leave drops its model. The
/// data directory does not keep rooms (``EphemeralModels``).
///
/// Locking: one lock, taken before the store's; a room's model is written only under it, so the
/// entries here and the members in the store change together. Nothing the store calls back takes it.
final class PresenceRooms: Sendable {
    /// The bounds of rooms and entries (`--max-presence-*`, `--presence-grace`).
    struct Limits: Sendable {
        /// Most entries in one room.
        var perRoom: Int
        /// Most bytes of one entry's `meta`, encoded.
        var entryBytes: Int
        /// Most entries one caller (credential, or address when anonymous) holds in all rooms.
        var perCaller: Int
        /// How long an entry stays with no stream holding it.
        var grace: Duration
        /// Most bytes of one entry's `onDisconnect` writes, as sent.
        var disconnectBytes: Int
        /// Most keys one stream may claim.
        static let keysPerStream = 16
    }

    /// What a join gives its client: the entry's id, shown in the room, and its secret key.
    struct Ticket: Sendable, Equatable {
        let room: String
        let id: String
        let key: String
    }

    private struct Entry {
        let room: String
        let id: String
        let caller: String
        /// When the credential that joined ends (nil: it does not).
        let endsAt: Date?
        /// The session it was joined with: the entry leaves when the session ends.
        let session: SessionTable.Key?
        /// How many open streams hold the entry.
        var streams = 0
        /// When the entry leaves unless a stream claims it first (nil while a stream holds it).
        var leavesAt: ContinuousClock.Instant?
        /// Applied when it leaves, unless by its own `DELETE`.
        var disconnect: DisconnectWrites?
    }

    private struct State {
        /// By key.
        var entries: [String: Entry] = [:]
        /// Entries by room.
        var rooms: [String: Int] = [:]
        /// Entries by caller.
        var callers: [String: Int] = [:]
    }

    let limits: Limits
    private let store: Store
    private let state = OrderedMutex(State())
    /// Applies an entry's `onDisconnect` writes (the server's: it checks them again and writes them).
    private let applyDisconnect: @Sendable (DisconnectWrites) -> Void

    init(store: Store, limits: Limits, applyDisconnect: @escaping @Sendable (DisconnectWrites) -> Void = { _ in }) {
        self.store = store
        self.limits = limits
        self.applyDisconnect = applyDisconnect
    }

    /// The model that holds `room`.
    static func model(of room: String) -> String { EphemeralModels.prefix + room }

    /// Whether `room` is a room's name: what a model name may hold, short enough for the prefix.
    static func isValidRoom(_ room: String) -> Bool {
        Store.isValidModelName(model(of: room))
    }

    /// Adds an entry to `room` for `caller`, shown as `who` (a credential's name, or null), with
    /// `meta`. It leaves after the grace period unless a stream claims its key first.
    func join(
        _ room: String, meta: JSON, who: String?, caller: String, endsAt: Date?, session: SessionTable.Key? = nil
    ) throws -> Ticket {
        guard Self.isValidRoom(room) else { throw PresenceError.invalidRoom(room) }
        try checkSize(of: meta)
        let ticket = Ticket(room: room, id: EventHub.makeStreamID(), key: EventHub.makeStreamID())
        let entry: JSON = [
            "id": .string(ticket.id), "who": who.map(JSON.string) ?? .null,
            "joined": .string(HistoryTime.text(Int64(Date().timeIntervalSince1970 * 1000))), "meta": meta
        ]
        try state.withLock { state in
            if state.rooms[room, default: 0] >= limits.perRoom { throw PresenceError.roomFull(room, limit: limits.perRoom) }
            if state.callers[caller, default: 0] >= limits.perCaller {
                throw PresenceError.tooManyEntries(limit: limits.perCaller)
            }
            let model = Self.model(of: room)
            do throws(StoreError) {
                _ = try store.write(model) { (editor) throws(StoreError) in _ = try editor.append(entry, to: Self.members) }
            } catch .modelNotFound {
                _ = try store.put(model, ["members": [entry]], ifRevision: 0)
            } catch .pathNotFound, .typeMismatch {
                throw PresenceError.notARoom(model)
            }
            state.entries[ticket.key] = Entry(
                room: room, id: ticket.id, caller: caller, endsAt: endsAt, session: session, leavesAt: .now + limits.grace)
            state.rooms[room, default: 0] += 1
            state.callers[caller, default: 0] += 1
        }
        return ticket
    }

    /// Replaces the `meta` of entry `id` in `room`, which `key` must be the key of.
    func update(_ room: String, id: String, key: String?, meta: JSON) throws {
        try checkSize(of: meta)
        try state.withLock { state in
            _ = try Self.owned(room, id: id, key: key, in: state)
            try write(room, id: id) { (editor, index) throws(StoreError) in
                try editor.set(meta, at: Self.members.appending(index: index).appending("meta"))
            }
        }
    }

    /// Removes entry `id` from `room`, which `key` must be the key of. Its `onDisconnect` writes
    /// are dropped: a client that leaves by itself can write what it wants.
    func leave(_ room: String, id: String, key: String?) throws {
        try state.withLock { state in
            let key = try Self.owned(room, id: id, key: key, in: state)
            _ = remove(key, in: &state, disconnecting: false)
        }
    }

    /// Registers (or, with nil, cancels) the writes applied when entry `id` of `room`, which `key`
    /// must be the key of, leaves other than by its own `DELETE`. The caller checked them.
    func setDisconnect(_ room: String, id: String, key: String?, writes: DisconnectWrites?) throws {
        try state.withLock { state in
            let key = try Self.owned(room, id: id, key: key, in: state)
            state.entries[key]!.disconnect = writes
        }
    }

    /// Claims the entries of `keys` for a stream until ``release(_:)``: they stay while it is open.
    /// Returns the keys of entries that are gone (left, timed out, or from before a restart).
    func claim(_ keys: [String]) -> [String] {
        state.withLock { state in
            var gone: [String] = []
            for key in keys {
                if state.entries[key] != nil {
                    state.entries[key]!.streams += 1
                    state.entries[key]!.leavesAt = nil
                } else {
                    gone.append(key)
                }
            }
            return gone
        }
    }

    /// A stream that claimed `keys` ended: each entry no other stream holds leaves after the grace
    /// period, or at once when its credential has ended.
    func release(_ keys: [String]) {
        let writes = state.withLock { state in
            let now = Date()
            var writes: [DisconnectWrites] = []
            for key in keys {
                guard var entry = state.entries[key] else { continue }
                entry.streams = max(0, entry.streams - 1)
                if entry.streams == 0 {
                    if let ends = entry.endsAt, ends <= now {
                        writes += remove(key, in: &state).map { [$0] } ?? []
                        continue
                    }
                    entry.leavesAt = .now + limits.grace
                }
                state.entries[key] = entry
            }
            return writes
        }
        for each in writes { applyDisconnect(each) }
    }

    /// Removes the entries whose grace period is over or whose credential has ended; the server
    /// calls it a few times per grace period.
    func sweep() {
        let writes = state.withLock { state in
            let (now, date) = (ContinuousClock.now, Date())
            let due = state.entries.filter { _, entry in
                (entry.leavesAt.map { $0 <= now } ?? false) || (entry.endsAt.map { $0 <= date } ?? false)
            }
            return due.keys.compactMap { remove($0, in: &state) }
        }
        for each in writes { applyDisconnect(each) }
    }

    /// Removes every entry (the server stops): no room keeps members no connection stands for.
    func removeAll() {
        let writes = state.withLock { state in state.entries.keys.compactMap { remove($0, in: &state) } }
        for each in writes { applyDisconnect(each) }
    }

    /// The sessions `ended` are over: their entries leave, and the writes they registered are
    /// dropped (a credential that has ended writes nothing).
    func endSessions(_ ended: Set<SessionTable.Key>) {
        state.withLock { state in
            for (key, entry) in state.entries {
                if let session = entry.disconnect?.session, ended.contains(session) { state.entries[key]!.disconnect = nil }
                if let session = entry.session, ended.contains(session) { _ = remove(key, in: &state, disconnecting: false) }
            }
        }
    }

    /// Whether `model` is a room someone is in (a model of a room's name no one is in is no room).
    func isOpen(model: String) -> Bool {
        guard model.hasPrefix(EphemeralModels.prefix) else { return false }
        let room = String(model.dropFirst(EphemeralModels.prefix.count))
        return state.withLock { $0.rooms[room] != nil }
    }

    private static let members = Path(["members"])

    /// Throws unless `meta` encodes to at most `--max-presence-bytes`.
    private func checkSize(of meta: JSON) throws {
        let bytes = meta.encoded().count
        if bytes > limits.entryBytes { throw PresenceError.entryTooLarge(bytes: bytes, limit: limits.entryBytes) }
    }

    /// The key of entry `id` in `room` when `key` is its key; else why not.
    private static func owned(_ room: String, id: String, key: String?, in state: State) throws -> String {
        guard let key, let entry = state.entries[key] else {
            throw key == nil ? PresenceError.keyMissing : PresenceError.notYours(room: room, id: id)
        }
        guard entry.room == room, entry.id == id else { throw PresenceError.notYours(room: room, id: id) }
        return key
    }

    /// Edits the member `id` of `room`'s model, found by its id.
    private func write(
        _ room: String, id: String, _ edit: (inout ModelEditor, Int) throws(StoreError) -> Void
    ) throws(StoreError) {
        _ = try store.write(Self.model(of: room)) { (editor) throws(StoreError) in
            guard case .array(let rows) = try editor.value(at: Self.members),
                let index = rows.firstIndex(where: { $0["id"] == .string(id) })
            else { return }
            try edit(&editor, index)
        }
    }

    /// Removes the entry of `key` from its room and from the counts; returns, when `disconnecting`,
    /// its `onDisconnect` writes, for the caller to apply once the lock is let go (once: the entry is
    /// gone). A room whose model a failing store refuses (a stopping server's) still forgets the
    /// entry: rooms are not kept.
    private func remove(_ key: String, in state: inout State, disconnecting: Bool = true) -> DisconnectWrites? {
        guard let entry = state.entries.removeValue(forKey: key) else { return nil }
        state.rooms[entry.room, default: 1] -= 1
        if state.rooms[entry.room] == 0 { state.rooms[entry.room] = nil }
        state.callers[entry.caller, default: 1] -= 1
        if state.callers[entry.caller] == 0 { state.callers[entry.caller] = nil }
        if state.rooms[entry.room] == nil {
            // The last one out: the room goes, so that rooms no one is in take no memory.
            _ = try? store.drop(Self.model(of: entry.room))
        } else {
            try? write(entry.room, id: entry.id) { (editor, index) throws(StoreError) in
                try editor.remove(at: Self.members.appending(index: index))
            }
        }
        return disconnecting ? entry.disconnect : nil
    }
}
