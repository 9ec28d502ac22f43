extension LiveBindServer {
    /// Every endpoint, in one table.
    func makeRouter() throws(ServerError) -> Router {
        var router = Router()
        router.add([.get], "/healthz") { _, _ in
            .bytes(Array(#"{"status":"ok"}"#.utf8), contentType: "application/json")
        }
        if let directory = configuration.publicDirectory {
            let files = try StaticFiles(directory: directory)
            router.fallback = { request, _ in try files.respond(to: request) }
        }
        return router
    }
}
