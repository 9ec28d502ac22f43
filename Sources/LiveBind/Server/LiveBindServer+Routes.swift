extension LiveBindServer {
    /// Every endpoint, in one table.
    func makeRouter(hub: EventHub) throws(ServerError) -> Router {
        var router = Router()
        let models = ModelEndpoint(store: store, registry: bindings, counters: counters)
        router.add([.get], "/healthz") { _, _ in
            .bytes(Array(#"{"status":"ok"}"#.utf8), contentType: "application/json")
        }
        router.add([.get], "/metrics") { [counters, store] _, _ in
            MetricsEndpoint.render(hub: hub.metrics, counters: counters, models: store.modelNames().count)
        }
        router.add([.get], "/events") { request, _ in try Self.openStream(request, hub: hub) }
        router.add([.get], "/models") { _, _ in models.list() }
        router.add([.get, .put, .delete, .patch, .post], "/models/:name/*") { request, parameters in
            let (name, pointer) = (parameters[0], parameters[1])
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
            request.method == .post ? try bindingsResource.create(request) : bindingsResource.list()
        }
        router.add([.get, .patch, .delete], "/bindings/:id") { request, parameters in
            switch request.method {
            case .patch: return try bindingsResource.update(parameters[0], request)
            case .delete: return try bindingsResource.delete(parameters[0])
            default: return try bindingsResource.get(parameters[0])
            }
        }
        if let directory = configuration.publicDirectory {
            let files = try StaticFiles(directory: directory)
            router.fallback = { request, _ in try files.respond(to: request) }
        }
        return router
    }

    /// `GET /events[?model=a&model=b]`, resuming after `Last-Event-ID` (header) or `?lastEventId=`.
    static func openStream(_ request: HTTPRequest, hub: EventHub) throws -> HTTPResponse {
        let names = request.queryValues("model").filter { !$0.isEmpty }
        let lastEventID = request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")
        let id = try hub.subscribe(models: names.isEmpty ? nil : Set(names), lastEventID: lastEventID)
        let headers: HTTPHeaders = [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        ]
        return HTTPResponse(status: 200, headers: headers, body: .stream(EventStream(hub: hub, id: id)))
    }
}
