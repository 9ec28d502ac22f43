import LiveBindEngine
internal import LiveBindHTTP
extension LiveBindServer {
    /// Every endpoint, in one table, each with what it needs (`RouteAccess`). The router runs the one
    /// access check (`AccessControl.grant`) before every handler, and handlers get what it established.
    func makeRouter(hub: EventHub, access: AccessControl, rooms: PresenceRooms? = nil) throws(ServerError) -> Router {
        var router = Router { request, route, parameters in try access.grant(request, route, parameters: parameters) }
        let auditAddresses = configuration.access.auditAddresses
        router.writeOrigin = { request, grant in
            CommitOrigin(
                actor: grant.credential?.actor
                    ?? (auditAddresses ? request.clientAddress.map { "address:" + $0 } : nil) ?? "anonymous",
                route: request.method.rawValue + " " + request.path)
        }
        let models = ModelEndpoint(store: store, counters: counters)
        let past = HistoryEndpoint(
            history: history,
            limits: .init(
                maxScan: configuration.persistence.historyMaxScan,
                maxPoints: configuration.persistence.historyMaxPoints),
            maxBuckets: configuration.persistence.historyMaxBuckets,
            maxBytes: configuration.persistence.historyMaxBytes)
        let idempotent = IdempotentWrites(table: idempotency, store: store, database: cluster == nil ? database : nil)
        let maxListBytes = configuration.limits.maxListBytes
        let health =
            access.sessions == nil
            ? #"{"status":"ok","version":"\#(LiveBindVersion.string)"}"#
            : #"{"status":"ok","version":"\#(LiveBindVersion.string)","sessions":true}"#
        router.add([.get], "/healthz", access: .open) { [cluster] _, _ in
            guard let cluster else { return .bytes(Array(health.utf8), contentType: "application/json") }
            return Self.clusterHealth(cluster.status, sessions: access.sessions != nil)
        }
        router.add([.get], "/metrics", access: .scoped) { [counters, store, database, cluster, idempotency] _, context in
            // They count every model's events and streams: a token limited to some models may not read them.
            if access.policy.privateReads, context.grant.reach != .everything { throw AccessError.metricsNeedEveryModel }
            return MetricsEndpoint.render(
                hub: hub.metrics, counters: counters, models: store.visibleModelNames().count,
                log: database?.writer, cluster: cluster, idempotencyKeys: idempotency.count)
        }
        let replays = ReplayBudget(hub: hub)
        // A restart empties the rooms a crashed run had open: a stream that resumes from a point where
        // they were open starts again.
        let roomsEmptied = roomsOpenSince > 0 ? roomsOpenSince...max(roomsOpenSince, store.visibleSequence) : nil
        let streamsPerAddress =
            configuration.streams.maxStreamsPerAddress > 0
            ? AddressQuota(limit: configuration.streams.maxStreamsPerAddress, countsLoopback: configuration.countsLoopbackStreams) : nil
        router.add([.get], "/events", access: .scoped(model: .query("model"), queryToken: true)) { [cluster] request, context in
            // A client coming from a node a few commits ahead resumes here once this node has them.
            if let cluster, let id = (request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")).flatMap({ UInt64($0) }) {
                cluster.waitUntilApplied(event: id, timeout: .seconds(2))
            }
            var replay: (bytes: [UInt8], through: UInt64, budget: ReplayBudget)?
            if let since = request.queryValue("since"), request.headers["Last-Event-ID"] == nil, request.queryValue("lastEventId") == nil {
                let prefix = try HistoryReplay.prefix(
                    models: request.queryValues("model").filter { !$0.isEmpty },
                    since: try HistoryEndpoint.point(since, parameter: "since"),
                    step: request.queryValue("step"), path: request.queryValue("path"),
                    endpoint: past)
                // `retry:` first, as on every stream; the hub's own comes again after the replay.
                let bytes = EventEncoder.retry(milliseconds: hub.settings.retryMilliseconds) + prefix.bytes
                try replays.take(bytes.count)
                replay = (bytes, prefix.through, replays)
            }
            do {
                return try Self.openStream(
                    request, hub: hub, grant: context.grant, streamsPerAddress: streamsPerAddress,
                    replay: replay, presence: rooms.map { ($0, roomsEmptied) })
            } catch {
                // The stream that would have sent the replay was not made.
                replay?.budget.release(replay?.bytes.count ?? 0)
                throw error
            }
        }
        // Joining a room needs what reading it needs; an entry's key is what changes and removes it.
        let presence = PresenceEndpoint(rooms: cluster == nil ? rooms : nil, access: access, store: store)
        router.add([.post], "/presence/:room", access: RouteAccess(rule: .scoped, scope: .read)) { request, context in
            try presence.join(request, room: context.parameters[0], grant: context.grant)
        }
        router.add([.patch, .delete], "/presence/:room/:id", access: RouteAccess(rule: .scoped, scope: .read)) {
            request, context in
            try presence.change(request, room: context.parameters[0], id: context.parameters[1], grant: context.grant)
        }
        // Writes made later on the caller's behalf: what writing needs (and reading, with --private).
        router.add([.put, .delete], "/presence/:room/:id/disconnect", access: .scoped) { request, context in
            try access.checkRead(context.grant)
            return try presence.disconnect(
                request, room: context.parameters[0], id: context.parameters[1], grant: context.grant)
        }
        // Moving a window of one's own stream changes no model: it needs what the stream needs, `read`.
        router.add([.patch], "/events/:stream", access: RouteAccess(rule: .scoped, scope: .read)) { request, context in
            try Self.moveWindow(request, stream: context.parameters[0], hub: hub, reach: context.grant.reach)
            return HTTPResponse(status: 204)
        }
        router.add([.get, .patch], "/models", access: .scoped) { request, context in
            guard request.method == .patch else {
                return models.list(reach: context.grant.reach, after: request.queryValue("after"), maxBytes: maxListBytes)
            }
            // Preconditions and JSON Patch tests read the models: a write to several needs `read` too.
            try access.checkRead(context.grant)
            return try idempotent.run(request, context.grant, flags: "s", tagged: true) {
                try models.patchSeveral(request, reach: context.grant.reach)
            }
        }
        router.add([.get, .put, .delete, .patch, .post], "/models/:name/*", access: .scoped(model: .parameter(0))) { request, context in
            let (name, pointer) = (context.parameters[0], context.parameters[1])
            if request.method == .get || request.method == .head {
                if request.query.contains(where: { $0.name == "history" }) {
                    // The models whose writes the caller may see (a binding carries writes across models).
                    let audit = request.query.contains { $0.name == "audit" } ? try access.checkAudit(request, model: name) : nil
                    return try past.series(name, pointer, request, audit: audit)
                }
                if let at = request.queryValue("at") { return try past.value(name, pointer, at: at) }
                return try models.get(name, pointer)
            }
            // A room changes only through /presence; a model of such a name that is no room (made before
            // the prefix was reserved, or a room left over) may be dropped.
            if EphemeralModels.contains(name),
                !(request.method == .delete && pointer.isEmpty && rooms?.isOpen(model: name) == false)
            {
                throw PresenceError.roomWrittenDirectly(name)
            }
            let blind = access.writesBlind(context.grant)
            // What a stored answer shows beyond id and revision (see `IdempotencyTicket.flags`).
            var flags = request.method == .put && (try? Path(pointer: pointer)) == .root ? "c" : ""
            if !blind
                && (request.method == .put || request.method == .post
                    || request.method == .patch && request.mediaType == RequestBody.mergePatch)
            {
                flags += "i"
            }
            return try idempotent.run(request, context.grant, flags: flags, tagged: true) {
                blind ? try models.blindWrite(name, pointer, request) : try models.write(name, pointer, request)
            }
        }
        let bindingsResource = BindingsResource(
            registry: bindings, counters: counters, database: database, cluster: cluster,
            idempotency: idempotency)
        router.add([.get, .post], "/bindings", access: .scoped) { request, context in
            let reach = context.grant.reach
            guard request.method == .post else {
                return bindingsResource.list(reach: reach, after: request.queryValue("after"), maxBytes: maxListBytes)
            }
            try access.checkRead(context.grant)
            if reach != .everything { try bindingsResource.checkNew(request, reach: reach) }
            return try idempotent.runRecording(request, context.grant) { tag in try bindingsResource.create(request, tag: tag) }
        }
        router.add([.get, .patch, .delete], "/bindings/:id", access: .scoped) { request, context in
            let id = context.parameters[0]
            try access.checkRead(context.grant)
            try bindingsResource.check(id, reach: context.grant.reach)
            switch request.method {
            case .patch:
                return try idempotent.runRecording(request, context.grant) { tag in try bindingsResource.update(id, request, tag: tag) }
            case .delete: return try idempotent.runRecording(request, context.grant) { tag in try bindingsResource.delete(id, tag: tag) }
            default: return try bindingsResource.get(id)
            }
        }
        if let sessions = access.sessions {
            let endpoint = SessionEndpoint(
                sessions: sessions, hub: hub, rooms: cluster == nil ? rooms : nil,
                secureCookies: configuration.access.secureCookies)
            router.add([.post], "/session", access: RouteAccess(rule: .bearer)) { request, context in
                try endpoint.create(request, context.grant)
            }
            router.add([.delete], "/session", access: .open) { request, _ in endpoint.end(request) }
        }
        if let directory = configuration.network.publicDirectory {
            let files = try StaticFiles(
                directory: directory,
                contentSecurityPolicy: configuration.network.contentSecurityPolicy
                    ?? StaticFiles.defaultContentSecurityPolicy)
            router.fallback = { request in try files.respond(to: request) }
        } else if !configuration.network.builtinFiles.isEmpty {
            let files = BuiltinFiles(configuration.network.builtinFiles)
            router.fallback = { request in try files.respond(to: request) }
        }
        return router
    }

    /// `GET /events[?model=a&model=b]`, resuming after `Last-Event-ID` (header) or `?lastEventId=`.
    /// With a credential limited to some model prefixes, named models are covered (the access check
    /// made sure of `model=`; `sub=` models are checked here), and the stream carries only covered
    /// models. A stream opened with a credential that expires (a JWT, a session) gets `auth_revoked`
    /// and ends at the expiry.
    ///
    /// `?sub=model[/pointer][;window]` (repeatable) subscribes to locations and windows (see
    /// `Subscription`); a `sub` of a whole model is the same as `model=`.
    ///
    /// With `streamsPerAddress`, the stream takes one of its client address's streams (503 when they
    /// are taken) and gives it back when it ends, by whatever path (`EventStream.close`).
    static func openStream(
        _ request: HTTPRequest, hub: EventHub, grant: AccessControl.Grant,
        streamsPerAddress: AddressQuota? = nil,
        replay: (bytes: [UInt8], through: UInt64, budget: ReplayBudget)? = nil,
        presence: (rooms: PresenceRooms, emptied: ClosedRange<UInt64>?)? = nil
    ) throws -> HTTPResponse {
        let reach = grant.reach
        var names = request.queryValues("model").filter { !$0.isEmpty }
        let subs = request.queryValues("sub")
        if subs.count > hub.settings.maxSubscriptions {
            throw RequestError.tooManySubscriptions(given: subs.count, limit: hub.settings.maxSubscriptions)
        }
        var locations: [Subscription] = []
        for text in subs {
            let location = try Subscription.parse(text, maxWindow: hub.settings.maxWindow, viewLimits: hub.settings.viewLimits)
            if location.path.isRoot && location.window == nil { names.append(location.model) } else { locations.append(location) }
        }
        for location in locations {
            if names.contains(location.model) {
                throw RequestError.conflictingSubscription(
                    location.name,
                    "is inside the whole model \(location.model), which this stream already has (model= or sub=\(location.model))")
            }
            if locations.filter({ $0.name == location.name }).count > 1 {
                throw RequestError.conflictingSubscription(location.name, "is given twice; one window per location and stream")
            }
            // A view's events are its own rows, in its own coordinates: views of one array, and a view
            // beside a location that holds its array, each get what is theirs.
            if location.view != nil { continue }
            // One inside another would get every change twice, and a snapshot of each: 60 nested
            // locations made one commit cost their stream 60 copies of it.
            if let outer = locations.first(where: {
                $0.model == location.model && $0.name != location.name
                    && $0.view == nil && $0.path.isPrefix(of: location.path)
            }) {
                throw RequestError.conflictingSubscription(
                    location.name,
                    "is inside \(outer.name), which this stream already has: its changes come with it")
            }
        }
        for name in names { try reach.check(name) }
        for location in locations { try reach.check(location.model) }
        let keys = try PresenceEndpoint.keys(of: request)
        if !keys.isEmpty, presence == nil { throw PresenceError.notInCluster }
        let lastEventID = replay.map { String($0.through) } ?? request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")
        let wholeModels: Set<String>? = names.isEmpty ? (subs.isEmpty ? nil : []) : Set(names)
        let filter = ModelFilter(names: wholeModels, prefixes: reach.prefixes)
        // Rooms a crashed run had open are empty now, which no event says: a stream that saw them open
        // and may show rooms starts again.
        let resumable =
            presence.map { presence in
                !(lastEventID.flatMap { UInt64($0) }.map { presence.emptied?.contains($0) ?? false } ?? false)
                    || !(filter.mayWant(prefix: EphemeralModels.prefix)
                        || locations.contains { EphemeralModels.contains($0.model) })
            } ?? true
        let hold = try streamsPerAddress?.take(for: request.clientAddress)
        let id: Int
        do {
            id = try hub.subscribe(
                models: filter, lastEventID: lastEventID, resumable: resumable, locations: locations,
                announced: !subs.isEmpty, expiresAt: grant.credential?.expiresAt, session: grant.credential?.session)
        } catch {
            hold?.release()
            throw error
        }
        // The entries the stream holds while open; those gone already are named after its snapshots.
        let gone = presence?.rooms.claim(keys) ?? []
        if !gone.isEmpty { hub.notify(id, PresenceEndpoint.goneFrame(gone)) }
        let claimed = keys.filter { !gone.contains($0) }
        var ended: (@Sendable () -> Void)?
        if let rooms = presence?.rooms, !claimed.isEmpty { ended = { rooms.release(claimed) } }
        let headers: HTTPHeaders = [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no"
        ]
        return HTTPResponse(
            status: 200, headers: headers,
            body: .stream(
                EventStream(
                    hub: hub, id: id, hold: hold, prefix: replay?.bytes ?? [], replays: replay?.budget,
                    ended: ended)))
    }

    /// `PATCH /events/{stream}` with `{"sub":"model/pointer","offset":K,"limit":N}` (or `"first":N`,
    /// `"last":N`): moves that location's window. The stream id is the capability; the token must
    /// still reach the model, as for the stream.
    static func moveWindow(_ request: HTTPRequest, stream: String, hub: EventHub, reach: AccessControl.Reach) throws {
        _ = try RequestBody.mediaType(of: request, accepted: RequestBody.jsonOnly)
        guard case .object(let members) = try RequestBody.parseJSON(request) else {
            throw RequestError.malformedBody(#"send an object such as {"sub":"sensor/readings","offset":100,"limit":50}"#)
        }
        guard case .string(let name)? = members["sub"] else {
            throw RequestError.malformedBody(#""sub" must name one of the stream's sub values, such as "sensor/readings""#)
        }
        var parameters: [(name: String, value: Int)] = []
        for (key, value) in members where key != "sub" {
            guard Window.parameterNames.contains(key) else {
                throw RequestError.malformedBody("unknown member '\(key)': send sub with first, last, or offset and limit")
            }
            guard case .int(let number) = value, number >= 0 else {
                throw RequestError.malformedBody("'\(key)' must be a whole number, 0 or more")
            }
            parameters.append((key, number))
        }
        guard let window = try Window(parameters: parameters, subscription: name, maxWindow: hub.settings.maxWindow) else {
            throw RequestError.malformedBody("give the window: first, last, or offset and limit")
        }
        try hub.moveWindow(stream: stream, location: name, to: window) { model in try reach.check(model) }
    }
}
