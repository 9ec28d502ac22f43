extension LiveBindServer {
    /// Every endpoint, in one table, each with what it needs (`RouteAccess`). The router runs the one
    /// access check (`AccessControl.grant`) before every handler, and handlers get what it established.
    func makeRouter(hub: EventHub, access: AccessControl) throws(ServerError) -> Router {
        var router = Router { request, route, parameters in try access.grant(request, route, parameters: parameters) }
        let models = ModelEndpoint(store: store, counters: counters)
        let health = access.sessions == nil ? #"{"status":"ok"}"# : #"{"status":"ok","sessions":true}"#
        router.add([.get], "/healthz", access: .open) { _, _ in
            .bytes(Array(health.utf8), contentType: "application/json")
        }
        router.add([.get], "/metrics", access: .scoped) { [counters, store, database] _, _ in
            MetricsEndpoint.render(hub: hub.metrics, counters: counters, models: store.visibleModelNames().count,
                                   log: database?.writer)
        }
        router.add([.get], "/events", access: .scoped(model: .query("model"), queryToken: true)) { request, context in
            try Self.openStream(request, hub: hub, grant: context.grant)
        }
        router.add([.get], "/models", access: .scoped) { _, context in models.list(reach: context.grant.reach) }
        router.add([.get, .put, .delete, .patch, .post], "/models/:name/*", access: .scoped(model: .parameter(0))) { request, context in
            let (name, pointer) = (context.parameters[0], context.parameters[1])
            switch request.method {
            case .put: return try models.put(name, pointer, request)
            case .delete: return try models.delete(name, pointer, request)
            case .patch: return try models.patch(name, pointer, request)
            case .post: return try models.post(name, pointer, request)
            default: return try models.get(name, pointer)
            }
        }
        let bindingsResource = BindingsResource(registry: bindings, counters: counters, database: database)
        router.add([.get, .post], "/bindings", access: .scoped) { request, context in
            let reach = context.grant.reach
            guard request.method == .post else { return bindingsResource.list(reach: reach) }
            if reach != .everything { try bindingsResource.checkNew(request, reach: reach) }
            return try bindingsResource.create(request)
        }
        router.add([.get, .patch, .delete], "/bindings/:id", access: .scoped) { request, context in
            let id = context.parameters[0]
            try bindingsResource.check(id, reach: context.grant.reach)
            switch request.method {
            case .patch: return try bindingsResource.update(id, request)
            case .delete: return try bindingsResource.delete(id)
            default: return try bindingsResource.get(id)
            }
        }
        if let sessions = access.sessions {
            let endpoint = SessionEndpoint(sessions: sessions, hub: hub, secureCookies: configuration.secureCookies)
            router.add([.post], "/session", access: RouteAccess(rule: .bearer)) { request, context in
                endpoint.create(request, context.grant)
            }
            router.add([.delete], "/session", access: .open) { request, _ in endpoint.end(request) }
        }
        if let directory = configuration.publicDirectory {
            let files = try StaticFiles(directory: directory)
            router.fallback = { request in try files.respond(to: request) }
        }
        return router
    }

    /// `GET /events[?model=a&model=b]`, resuming after `Last-Event-ID` (header) or `?lastEventId=`.
    /// With a credential limited to some model prefixes, named models are covered (the access check
    /// made sure), and the stream carries only covered models. A stream opened with a credential that
    /// expires (a JWT, a session) gets `auth_revoked` and ends at the expiry.
    static func openStream(_ request: HTTPRequest, hub: EventHub, grant: AccessControl.Grant) throws -> HTTPResponse {
        let names = request.queryValues("model").filter { !$0.isEmpty }
        let lastEventID = request.headers["Last-Event-ID"] ?? request.queryValue("lastEventId")
        let filter = ModelFilter(names: names.isEmpty ? nil : Set(names), prefixes: grant.reach.prefixes)
        let id = try hub.subscribe(models: filter, lastEventID: lastEventID,
                                   expiresAt: grant.credential?.expiresAt, session: grant.credential?.session)
        let headers: HTTPHeaders = [
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        ]
        return HTTPResponse(status: 200, headers: headers, body: .stream(EventStream(hub: hub, id: id)))
    }
}
