extension LiveBindServer {
    /// Every endpoint, in one table.
    func makeRouter(hub: EventHub, access: AccessControl) throws(ServerError) -> Router {
        var router = Router()
        let models = ModelEndpoint(store: store, counters: counters)
        router.add([.get], "/healthz") { _, _ in
            .bytes(Array(#"{"status":"ok","version":"\#(LiveBindVersion.string)"}"#.utf8), contentType: "application/json")
        }
        router.add([.get], "/metrics") { [counters, store, database] request, _ in
            _ = try access.authorize(request, .read)
            return MetricsEndpoint.render(hub: hub.metrics, counters: counters, models: store.visibleModelNames().count,
                                          log: database?.writer)
        }
        router.add([.get], "/events") { request, _ in
            try Self.openStream(request, hub: hub, reach: try access.authorize(request, .read, queryToken: true))
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
        } else if !configuration.builtinFiles.isEmpty {
            let files = BuiltinFiles(configuration.builtinFiles)
            router.fallback = { request, _ in try files.respond(to: request) }
        }
        return router
    }

    /// `GET /events[?model=a&model=b]`, resuming after `Last-Event-ID` (header) or `?lastEventId=`.
    /// With a token limited to some model prefixes, named models must be covered, and the stream
    /// carries only covered models.
    static func openStream(_ request: HTTPRequest, hub: EventHub, reach: AccessControl.Reach) throws -> HTTPResponse {
        let names = request.queryValues("model").filter { !$0.isEmpty }
        for name in names { try reach.check(name) }
        let lastEventID = request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")
        let filter = ModelFilter(names: names.isEmpty ? nil : Set(names), prefixes: reach.prefixes)
        let id = try hub.subscribe(models: filter, lastEventID: lastEventID)
        let headers: HTTPHeaders = [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        ]
        return HTTPResponse(status: 200, headers: headers, body: .stream(EventStream(hub: hub, id: id)))
    }
}
