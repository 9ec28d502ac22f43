extension LiveBindServer {
    /// Every endpoint, in one table.
    func makeRouter(hub: EventHub, access: AccessControl) throws(ServerError) -> Router {
        var router = Router()
        let models = ModelEndpoint(store: store, counters: counters)
        router.add([.get], "/healthz") { _, _ in
            .bytes(Array(#"{"status":"ok"}"#.utf8), contentType: "application/json")
        }
        router.add([.get], "/metrics") { [counters, store, database] request, _ in
            _ = try access.authorize(request, .read)
            return MetricsEndpoint.render(hub: hub.metrics, counters: counters, models: store.visibleModelNames().count,
                                          log: database?.writer)
        }
        router.add([.get], "/events") { request, _ in
            try Self.openStream(request, hub: hub, reach: try access.authorize(request, .read, queryToken: true))
        }
        router.add([.patch], "/events/:stream") { request, parameters in
            try access.checkOrigin(request)
            let reach = try access.authorize(request, .read)
            try Self.moveWindow(request, stream: parameters[0], hub: hub, reach: reach)
            return HTTPResponse(status: 204)
        }
        router.add([.get], "/models") { request, _ in models.list(reach: try access.authorize(request, .read)) }
        router.add([.get, .put, .delete, .patch, .post], "/models/:name/*") { request, parameters in
            let (name, pointer) = (parameters[0], parameters[1])
            let reading = request.method == .get || request.method == .head
            if !reading { try access.checkOrigin(request) }
            try access.authorize(request, reading ? .read : .write).check(name)
            switch request.method {
            case .put: return try models.put(name, pointer, request)
            case .delete: return try models.delete(name, pointer, request)
            case .patch: return try models.patch(name, pointer, request)
            case .post: return try models.post(name, pointer, request)
            default: return try models.get(name, pointer)
            }
        }
        let bindingsResource = BindingsResource(registry: bindings, counters: counters, database: database)
        router.add([.get, .post], "/bindings") { request, _ in
            guard request.method == .post else { return bindingsResource.list(reach: try access.authorize(request, .read)) }
            try access.checkOrigin(request)
            let reach = try access.authorize(request, .write)
            if reach != .everything { try bindingsResource.checkNew(request, reach: reach) }
            return try bindingsResource.create(request)
        }
        router.add([.get, .patch, .delete], "/bindings/:id") { request, parameters in
            let id = parameters[0]
            let reading = request.method == .get || request.method == .head
            if !reading { try access.checkOrigin(request) }
            try bindingsResource.check(id, reach: try access.authorize(request, reading ? .read : .write))
            switch request.method {
            case .patch: return try bindingsResource.update(id, request)
            case .delete: return try bindingsResource.delete(id)
            default: return try bindingsResource.get(id)
            }
        }
        if let directory = configuration.publicDirectory {
            let files = try StaticFiles(directory: directory)
            router.fallback = { request, _ in try files.respond(to: request) }
        }
        return router
    }

    /// `GET /events[?model=a&model=b]`, resuming after `Last-Event-ID` (header) or `?lastEventId=`.
    /// With a token limited to some model prefixes, named models must be covered, and the stream
    /// carries only covered models.
    ///
    /// `?sub=model[/pointer][;window]` (repeatable) subscribes to locations and windows (see
    /// `Subscription`); a `sub` of a whole model is the same as `model=`.
    static func openStream(_ request: HTTPRequest, hub: EventHub, reach: AccessControl.Reach) throws -> HTTPResponse {
        var names = request.queryValues("model").filter { !$0.isEmpty }
        let subs = request.queryValues("sub")
        if subs.count > hub.settings.maxSubscriptions {
            throw RequestError.tooManySubscriptions(given: subs.count, limit: hub.settings.maxSubscriptions)
        }
        var locations: [Subscription] = []
        for text in subs {
            let location = try Subscription.parse(text, maxWindow: hub.settings.maxWindow)
            if location.path.isRoot && location.window == nil { names.append(location.model) } else { locations.append(location) }
        }
        for location in locations {
            if names.contains(location.model) {
                throw RequestError.conflictingSubscription(location.name,
                    "is inside the whole model \(location.model), which this stream already has (model= or sub=\(location.model))")
            }
            if locations.filter({ $0.name == location.name }).count > 1 {
                throw RequestError.conflictingSubscription(location.name, "is given twice; one window per location and stream")
            }
        }
        for name in names { try reach.check(name) }
        for location in locations { try reach.check(location.model) }
        let lastEventID = request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")
        let wholeModels: Set<String>? = names.isEmpty ? (subs.isEmpty ? nil : []) : Set(names)
        let filter = ModelFilter(names: wholeModels, prefixes: reach.prefixes)
        let id = try hub.subscribe(models: filter, lastEventID: lastEventID, locations: locations, announced: !subs.isEmpty)
        let headers: HTTPHeaders = [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        ]
        return HTTPResponse(status: 200, headers: headers, body: .stream(EventStream(hub: hub, id: id)))
    }

    /// `PATCH /events/{stream}` with `{"sub":"model/pointer","offset":K,"limit":N}` (or `"first":N`,
    /// `"last":N`): moves that location's window. The stream id is the capability; the token must
    /// still reach the model, as for the stream.
    static func moveWindow(_ request: HTTPRequest, stream: String, hub: EventHub, reach: AccessControl.Reach) throws {
        _ = try RequestBody.mediaType(of: request, accepted: [RequestBody.json])
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
