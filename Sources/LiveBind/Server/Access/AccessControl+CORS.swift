import LiveBindEngine
internal import LiveBindHTTP
extension AccessControl {
    /// Methods an allowed origin may use.
    static let corsMethods = "GET, HEAD, PUT, POST, PATCH, DELETE"
    /// Request headers an allowed origin may send.
    static let corsRequestHeaders = "Authorization, Content-Type, If-Match, Last-Event-ID, If-None-Match, Idempotency-Key, Presence-Key"
    /// Response headers an allowed origin's scripts may read.
    static let corsExposedHeaders =
        "ETag, \(ModelEndpoint.eventIDHeader), Location, Retry-After, WWW-Authenticate, \(LiveBindServer.nodeHeader)"

    /// The answer to a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed
    /// origin; nil for anything else, which is routed as usual (and gets no CORS approval).
    func preflight(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == .options, request.headers["Access-Control-Request-Method"] != nil,
            let origin = allowedOrigin(of: request)
        else { return nil }
        let headers: HTTPHeaders = [
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": Self.corsMethods,
            "Access-Control-Allow-Headers": Self.corsRequestHeaders,
            "Access-Control-Max-Age": "600",
            "Vary": "Origin"
        ]
        return HTTPResponse(status: 204, headers: headers)
    }

    /// Adds the headers every answer carries: `nosniff`, and for a request from an allowed origin the
    /// CORS approval (`Vary: Origin` whenever other origins are configured, so caches keep them apart).
    /// What every answer over https says: browsers use only https for this host for a year. Not for
    /// subdomains, which this server does not speak for.
    static let strictTransportSecurity = "max-age=31536000"

    func finish(_ response: inout HTTPResponse, for request: HTTPRequest) {
        if response.headers["X-Content-Type-Options"] == nil { response.headers.add("X-Content-Type-Options", "nosniff") }
        if request.scheme == "https", response.headers["Strict-Transport-Security"] == nil {
            response.headers.add("Strict-Transport-Security", Self.strictTransportSecurity)
        }
        guard !allowedOrigins.isEmpty, response.headers["Access-Control-Allow-Origin"] == nil else { return }
        response.headers.add("Vary", "Origin")
        if let origin = allowedOrigin(of: request) {
            response.headers.add("Access-Control-Allow-Origin", origin)
            response.headers.add("Access-Control-Expose-Headers", Self.corsExposedHeaders)
        }
    }
}
