import LiveBindEngine
internal import LiveBindHTTP
/// A web origin: scheme, host and port (`https://app.example.com`, `http://127.0.0.1:8080`).
///
/// Compared by value with the port made explicit, so `https://a.example` equals `https://a.example:443`.
struct Origin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int

    /// Parses an `Origin` header value or an `--allow-origin` argument; nil for `null`, paths or junk.
    init?(parsing text: String) {
        let trimmed = text.trimmingWhitespace()
        guard let separator = trimmed.firstRange(of: "://") else { return nil }
        let scheme = trimmed[..<separator.lowerBound].lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return nil }
        self.init(scheme: scheme, authority: String(trimmed[separator.upperBound...]))
    }

    /// The origin a request with this `Host` header has under `scheme`: what its own pages send as `Origin`.
    init?(scheme: String, authority: String) {
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \t".contains($0) }) else { return nil }
        var host = Substring(authority.lowercased())
        var port: Int?
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
            if host[..<colon].contains(":") && !host.hasPrefix("[") { return nil }  // a bare IPv6 address
            guard let number = Int(host[host.index(after: colon)...]), (1...65535).contains(number) else { return nil }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty else { return nil }
        guard let resolved = port ?? Self.defaultPort(scheme) else { return nil }
        self.scheme = scheme
        self.host = String(host)
        self.port = resolved
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http", "ws": 80
        case "https", "wss": 443
        default: nil
        }
    }
}
