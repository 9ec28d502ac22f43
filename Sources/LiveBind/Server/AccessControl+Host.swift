extension AccessControl {
    /// Whether the server listens on a loopback address only (`127.x.x.x`, `::1`, `localhost`).
    static func isLoopback(address: String) -> Bool {
        let host = address.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// The DNS-rebinding guard: on a loopback-only server every request must name a loopback host
    /// (`localhost`, `*.localhost`, `127.x.x.x`, `[::1]`) or the host of an allowed origin in `Host`.
    /// Otherwise a page on another site whose name was re-pointed at 127.0.0.1 would be "same origin"
    /// with this server. Requests without `Host` (HTTP/1.0) pass.
    func checkHost(_ request: HTTPRequest) throws(AccessError) {
        guard loopbackOnly, let header = request.headers["Host"]?.trimmingWhitespace() else { return }
        guard let authority = Origin(scheme: "http", authority: header) else { throw .hostNotAllowed(header) }
        let host = authority.host
        if host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" { return }
        if host.hasPrefix("127."), host.split(separator: ".").count == 4, host.allSatisfy({ $0.isNumber || $0 == "." }) { return }
        if allowedOrigins.contains(where: { $0.host == host }) { return }
        throw .hostNotAllowed(header)
    }
}
