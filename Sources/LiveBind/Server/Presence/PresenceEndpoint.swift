import LiveBindEngine
internal import LiveBindHTTP

/// `/presence/{room}`: joining a room, changing one's entry and leaving (see ``PresenceRooms``).
///
/// Joining needs what reading the room's model needs; the entry's key, not the credential, is what
/// changes and removes it, so two tabs of one person are two entries that each leave on their own.
struct PresenceEndpoint: Sendable {
    let rooms: PresenceRooms?
    let access: AccessControl
    let store: Store

    /// The header that carries an entry's key.
    static let keyHeader = "Presence-Key"

    /// `POST /presence/{room}` with the entry's `meta` (any JSON; an empty body is `{}`): 201 with
    /// `{"room", "model", "id", "key"}`.
    func join(_ request: HTTPRequest, room: String, grant: AccessControl.Grant) throws -> HTTPResponse {
        let rooms = try self.rooms(reaching: room, grant)
        let meta = try Self.meta(of: request)
        // Public reads carry no credential; a token presented anyway names the entry and ends it.
        let credential = grant.credential ?? (try? access.presentedCredential(request, queryToken: false))
        let caller = credential?.actor ?? request.clientAddress.map { "address:" + $0 } ?? "anonymous"
        let ticket = try rooms.join(
            room, meta: meta, who: credential?.actor, caller: caller, endsAt: credential?.expiresAt,
            session: credential?.session)
        let body: JSON = [
            "room": .string(room), "model": .string(PresenceRooms.model(of: room)), "id": .string(ticket.id),
            "key": .string(ticket.key)
        ]
        var response = HTTPResponse.bytes(body.encoded(), status: 201, contentType: "application/json")
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    /// `PATCH /presence/{room}/{id}` (new `meta`) and `DELETE` (leave), with the entry's key in
    /// `Presence-Key`: 204.
    func change(_ request: HTTPRequest, room: String, id: String, grant: AccessControl.Grant) throws -> HTTPResponse {
        let rooms = try self.rooms(reaching: room, grant)
        let key = request.headers[Self.keyHeader]
        if request.method == .delete {
            try rooms.leave(room, id: id, key: key)
        } else {
            try rooms.update(room, id: id, key: key, meta: try Self.meta(of: request))
        }
        return HTTPResponse(status: 204)
    }

    /// `PUT /presence/{room}/{id}/disconnect` with writes as `PATCH /models` takes them, applied when
    /// the entry leaves other than by its own `DELETE` (Firebase's `onDisconnect`); `DELETE` cancels
    /// them. The key in `Presence-Key`; the writes are checked now (the caller must be able to make
    /// them) and again when applied. 204.
    func disconnect(_ request: HTTPRequest, room: String, id: String, grant: AccessControl.Grant) throws -> HTTPResponse {
        let rooms = try self.rooms(reaching: room, grant)
        let key = request.headers[Self.keyHeader]
        guard request.method == .put else {
            try rooms.setDisconnect(room, id: id, key: key, writes: nil)
            return HTTPResponse(status: 204)
        }
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        let limit = rooms.limits.disconnectBytes
        if request.body.count > limit { throw PresenceError.disconnectTooLarge(bytes: request.body.count, limit: limit) }
        let body = try RequestBody.parseJSON(request)
        _ = try ModelEndpoint.severalEdits(body, reach: grant.reach, store: store)
        let writes = PresenceRooms.DisconnectWrites(
            body: request.body, actor: grant.credential?.actor, reach: grant.reach,
            expiresAt: grant.credential?.expiresAt, session: grant.credential?.session)
        try rooms.setDisconnect(room, id: id, key: key, writes: writes)
        return HTTPResponse(status: 204)
    }

    /// The rooms, when the caller reaches `room`'s model (none in a cluster: 501).
    private func rooms(reaching room: String, _ grant: AccessControl.Grant) throws -> PresenceRooms {
        guard let rooms else { throw PresenceError.notInCluster }
        try grant.reach.check(PresenceRooms.model(of: room))
        return rooms
    }

    /// The keys a stream claims: `?presence=KEY,KEY` (at most ``PresenceRooms/Limits/keysPerStream``).
    static func keys(of request: HTTPRequest) throws -> [String] {
        let keys = request.queryValues("presence").flatMap { $0.split(separator: ",").map(String.init) }
        let limit = PresenceRooms.Limits.keysPerStream
        if keys.count > limit { throw PresenceError.tooManyKeys(given: keys.count, limit: limit) }
        return keys
    }

    /// The frame a stream sends first when some keys it presented name no entry: its client joins again.
    static func goneFrame(_ keys: [String]) -> [UInt8] {
        let data: JSON = ["gone": .array(.init(keys.map(JSON.string)))]
        return Array("event: presence\ndata: ".utf8) + data.encoded() + Array("\n\n".utf8)
    }

    private static func meta(of request: HTTPRequest) throws -> JSON {
        if request.body.isEmpty { return [:] }
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        return try RequestBody.parseJSON(request)
    }
}
