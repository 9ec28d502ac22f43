import LiveBindEngine
/// Who may read and write over HTTP, and which browser origins may call from other pages.
///
/// With no tokens every request may read and write (keep the server on loopback then). With tokens,
/// every write needs `Authorization: Bearer <token>` with the `write` scope and a model-name prefix
/// that covers what it changes; with `privateReads` reads need a `read` token too.
///
/// ```swift
/// var configuration = LiveBindServer.Configuration()
/// configuration.access.policy.tokens = [
///     .init("s3cret-admin"),                                      // read and write, every model
///     .init("s3cret-lab", scopes: [.read, .write], models: ["lab-"]),
/// ]
/// configuration.access.policy.privateReads = true
/// ```
public struct AccessPolicy: Sendable {
    /// The bearer tokens accepted; with no tokens and no ``jwt``, writes need no token.
    public var tokens: [Token] = []
    /// JSON Web Tokens accepted beside ``tokens``; nil accepts none.
    public var jwt: JWT?
    /// Whether reads (`GET /models…`, `/events`, `/bindings`, `/metrics`) need a token with the `read` scope.
    public var privateReads = false
    /// Other origins (`https://app.example.com`) allowed to call the API from their pages (CORS) and to
    /// write (the `Origin` check). The server's own origin is always allowed.
    public var allowedOrigins: [String] = []

    /// No tokens, public reads, no other origins.
    public init() {}

    /// One bearer token: what it may do, and to which models.
    public struct Token: Sendable {
        /// What a token allows.
        public enum Scope: String, Sendable, CaseIterable {
            /// `GET` models, streams and bindings (matters with `privateReads`).
            case read
            /// Every write to models and bindings.
            case write
            /// Who made each change, in `?history&audit` (with `read`).
            case audit
        }

        /// The secret a client sends as `Authorization: Bearer <secret>`.
        public var secret: String
        /// What the token allows.
        public var scopes: Set<Scope>
        /// Model-name prefixes the token reaches (`"lab-"` covers `lab-1`); nil reaches every model.
        public var models: [String]?
        /// A label for messages and logs (never the secret).
        public var name: String?

        /// A token; by default with both scopes on every model.
        public init(_ secret: String, scopes: Set<Scope> = [.read, .write], models: [String]? = nil, name: String? = nil) {
            self.secret = secret
            self.scopes = scopes
            self.models = models
            self.name = name
        }

        /// Whether the token reaches `model`.
        public func covers(model: String) -> Bool {
            guard let models else { return true }
            return models.contains { model.hasPrefix($0) }
        }
    }

    /// Whether any token is configured (static or JWT), so writes need one.
    var requiresTokens: Bool { !tokens.isEmpty || jwt != nil }

    /// A reason the policy cannot be used, or nil.
    func problem() -> String? {
        if privateReads && !requiresTokens {
            return "private reads need at least one token (--token, --tokens or --jwt-key)"
        }
        if let jwt, jwt.leewaySeconds < 0 || jwt.leewaySeconds > 600 {
            return "the JWT leeway must be 0...600 seconds"
        }
        for (index, token) in tokens.enumerated() {
            if let reason = Self.problem(with: token) { return "token \(index + 1)\(token.label): \(reason)" }
            if let earlier = tokens[..<index].firstIndex(where: { $0.secret == token.secret }) {
                return "token \(index + 1)\(token.label) is the same as token \(earlier + 1)\(tokens[earlier].label); each must be unique"
            }
        }
        for origin in allowedOrigins where Origin(parsing: origin) == nil {
            return "allowed origin '\(origin)' is not an origin such as https://app.example.com (scheme, host, optional port; no path)"
        }
        return nil
    }

    /// A reason one token cannot be used, or nil. Never mentions the secret.
    static func problem(with token: Token) -> String? {
        if token.secret.isEmpty { return "the token is empty" }
        if !token.secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            return "a token may hold only visible ASCII characters (no spaces)"
        }
        if token.scopes.isEmpty { return "no scopes: give \"read\", \"write\" or both" }
        if let models = token.models, models.isEmpty || models.contains(where: \.isEmpty) {
            return "an empty model prefix or list: leave \"models\" out to cover every model"
        }
        return nil
    }
}

extension AccessPolicy.Token {
    /// ` ("name")` when the token has a name, else empty.
    var label: String { name.map { " (\"\($0)\")" } ?? "" }
}

extension AccessPolicy {
    /// One line for the start-up log: what needs a token. Never shows a secret.
    var summary: String {
        let origins = allowedOrigins.isEmpty ? "no other origins (no CORS)" : "origins \(allowedOrigins.joined(separator: ", "))"
        guard requiresTokens else {
            return
                "access: no tokens, so anyone who can reach this port can read and write; browser writes only from this server's pages; \(origins)"
        }
        let reads = privateReads ? "reads need a read token" : "reads are open"
        let jwts = jwt.map { "; JWTs (\($0))" } ?? ""
        return "access: \(tokens.count) token\(tokens.count == 1 ? "" : "s")\(jwts); writes need a write token, \(reads); \(origins)"
    }
}

extension AccessPolicy.Token: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token without its secret, so printing a configuration never shows one.
    public var description: String {
        let scopeList = Scope.allCases.filter(scopes.contains).map(\.rawValue).joined(separator: ", ")
        let reach = models.map { "models \($0.joined(separator: ", "))" } ?? "every model"
        return "Token(\(name ?? "unnamed"): \(scopeList); \(reach))"
    }

    /// The same as `description`: the secret stays hidden.
    public var debugDescription: String { description }

    /// A mirror without the secret (`dump`, `print` of enclosing values).
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name as Any, "scopes": scopes, "models": models as Any], displayStyle: .struct)
    }
}
