import Foundation
import LiveBindEngine
internal import LiveBindHTTP

/// Applies an `AccessPolicy` to requests: bearer tokens (static and JWT), session cookies, scopes,
/// model prefixes and the `Origin` check. `grant` is the one check every route goes through.
///
/// Static tokens are compared in constant time: every configured token is compared over the same
/// number of bytes, whatever matches, so the answer's timing does not tell how much of a guess was right.
struct AccessControl: Sendable {
    let policy: AccessPolicy
    private let secrets: [[UInt8]]
    /// Every comparison runs over at least this many bytes (the longest configured token).
    private let comparedLength: Int
    let allowedOrigins: Set<Origin>
    /// Whether the server listens on loopback only, so `Host` must name a loopback host (`checkHost`).
    let loopbackOnly: Bool
    /// Whether `HTTPRequest.scheme` is known to be the client's (TLS here, or a trusted proxy): then an
    /// own origin must have that scheme. Otherwise an unknown proxy may have ended https, and both count.
    let knowsScheme: Bool
    /// Verifies JWTs when the policy accepts them.
    let verifier: JWTVerifier?
    /// The cookie sessions (`POST /session`), when the policy has tokens.
    let sessions: SessionTable?
    /// Longest bearer token (header, query or session request) looked at; longer ones are refused unread.
    let maxTokenLength: Int

    init(
        policy: AccessPolicy, listeningOn address: String = "0.0.0.0", knowsScheme: Bool = false,
        verifier: JWTVerifier? = nil, sessions: SessionTable? = nil, maxTokenLength: Int = 4096
    ) {
        self.policy = policy
        self.knowsScheme = knowsScheme
        loopbackOnly = Self.isLoopback(address: address)
        secrets = policy.tokens.map { Array($0.secret.utf8) }
        comparedLength = secrets.map(\.count).max() ?? 0
        allowedOrigins = Set(policy.allowedOrigins.compactMap(Origin.init(parsing:)))
        self.verifier = verifier
        self.sessions = sessions
        self.maxTokenLength = maxTokenLength
    }

    /// The models a caller reaches: every model, or the models under some prefixes.
    struct Reach: Sendable, Equatable {
        /// nil: every model.
        let prefixes: [String]?

        static let everything = Reach(prefixes: nil)

        func covers(_ model: String) -> Bool {
            guard let prefixes else { return true }
            return prefixes.contains { model.hasPrefix($0) }
        }

        /// Throws 403 unless `model` is covered.
        func check(_ model: String) throws(AccessError) {
            if !covers(model) { throw .modelNotCovered(model) }
        }
    }

    /// What a presented credential (a static token, a JWT or a session) allows, and until when.
    struct Credential: Sendable {
        /// What it allows.
        var scopes: Set<AccessPolicy.Token.Scope>
        /// Model-name prefixes it reaches; nil: every model.
        var prefixes: [String]?
        /// When it stops being valid (a JWT's `exp`, a session's end); nil: never.
        var expiresAt: Date?
        /// The static token's secret, which the write-rate limiter keys clients by; nil for others.
        var rateKey: String?
        /// The session it came from, when it came from a session cookie.
        var session: SessionTable.Key?
        /// Whom a JWT speaks for: its `sub`, after its `iss` when it has one; nil for static tokens and
        /// JWTs without `sub`. Sessions are capped per credential by it (`SessionTable`).
        var subject: String?
        /// Who it is in the audit trail: `token:NAME`, `jwt:SUB`, `session:` before either (see `?history&audit`).
        var actor: String?
    }

    /// What the access check established for one request: handlers receive it.
    struct Grant: Sendable {
        /// The models the request may reach.
        var reach: Reach
        /// The credential presented, when the route needed one; nil for open routes and public reads.
        var credential: Credential?

        /// Anyone's grant: every model, no credential.
        static let everything = Grant(reach: .everything, credential: nil)
    }

    /// THE access check, run by the router before every handler: what `route` needs for this request,
    /// from its credential. Throws 401 (no or a refused credential) or 403 (no such scope, model or origin).
    func grant(_ request: HTTPRequest, _ route: RouteAccess, parameters: [String]) throws(AccessError) -> Grant {
        let safe = request.method == .get || request.method == .head
        switch route.rule {
        case .open:
            if !safe { try checkOrigin(request) }
            return .everything
        case .bearer:
            if !safe { try checkOrigin(request) }
            guard let presented = Self.bearer(request), !presented.isEmpty else { throw .missingToken(forStream: false) }
            let credential = try verify(presented)
            return Grant(reach: Reach(prefixes: credential.prefixes), credential: credential)
        case .scoped:
            if !safe { try checkOrigin(request) }
            let scope = route.scope ?? (safe ? .read : .write)
            guard scope == .write ? policy.requiresTokens : policy.privateReads else { return .everything }
            let credential = try presentedCredential(request, queryToken: route.queryToken)
            guard credential.scopes.contains(scope) else { throw .missingScope(scope) }
            let reach = Reach(prefixes: credential.prefixes)
            switch route.models {
            case .none: break
            case .parameter(let index): try reach.check(parameters[index])
            case .query(let name): for model in request.queryValues(name) where !model.isEmpty { try reach.check(model) }
            }
            return Grant(reach: reach, credential: credential)
        }
    }

    /// Throws unless the request may see who changed `model` (`?history&audit`): with tokens
    /// configured, its credential needs the `audit` scope and must reach the model, even where
    /// reads are public. Returns the models the credential may audit (every model without tokens).
    func checkAudit(_ request: HTTPRequest, model: String) throws(AccessError) -> Reach {
        guard policy.requiresTokens else { return .everything }
        let credential = try presentedCredential(request, queryToken: false)
        guard credential.scopes.contains(.audit) else { throw .missingScope(.audit) }
        let reach = Reach(prefixes: credential.prefixes)
        try reach.check(model)
        return reach
    }

    /// Throws 403 unless `grant` may also read, when reads are private: a route that writes but whose
    /// answers or effects show a model's values (a binding copies its source into its target, and its
    /// `lastError` describes that source) needs `read` as well as `write`.
    /// Whether `grant` writes without being allowed to read: with private reads, a token without the
    /// `read` scope (see `ModelEndpoint.blindWrite`).
    func writesBlind(_ grant: Grant) -> Bool {
        policy.privateReads && !(grant.credential?.scopes.contains(.read) ?? false)
    }

    func checkRead(_ grant: Grant) throws(AccessError) {
        guard policy.privateReads else { return }
        guard let credential = grant.credential, credential.scopes.contains(.read) else { throw .missingScope(.read) }
    }

    /// The request's credential: `Authorization: Bearer`, else the session cookie, else (when
    /// `queryToken`) `?access_token=`. A bearer token that is refused is not passed over for a cookie.
    func presentedCredential(_ request: HTTPRequest, queryToken: Bool) throws(AccessError) -> Credential {
        if let presented = Self.bearer(request), !presented.isEmpty { return try verify(presented) }
        if let sessions, let id = SessionCookie.value(in: request.headers.values(of: "Cookie")) {
            guard let credential = sessions.credential(for: id) else { throw .unknownSession }
            return credential
        }
        if queryToken, let presented = request.queryValue("access_token"), !presented.isEmpty {
            return try verify(presented)
        }
        throw .missingToken(forStream: queryToken)
    }

    /// What the bearer token `presented` allows: a configured token, else a JWT the verifier accepts.
    func verify(_ presented: String) throws(AccessError) -> Credential {
        guard presented.utf8.count <= maxTokenLength else {
            throw .rejectedToken("it is longer than \(maxTokenLength) bytes (--max-token-length)")
        }
        if let token = match(presented) {
            return Credential(
                scopes: token.scopes, prefixes: token.models, expiresAt: nil, rateKey: token.secret,
                actor: "token:" + (token.name ?? "unnamed"))
        }
        if let verifier, presented.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 {
            return try verifier.verify(presented)
        }
        throw .invalidToken
    }

    /// The configured token equal to `presented`, comparing with every token in constant time.
    func match(_ presented: String) -> AccessPolicy.Token? {
        let candidate = Array(presented.utf8)
        let length = max(candidate.count, comparedLength)
        var found = -1
        for (index, secret) in secrets.enumerated() {
            let same = Self.constantTimeEqual(candidate, secret, over: length)
            found = same ? index : found
        }
        return found >= 0 ? policy.tokens[found] : nil
    }

    /// Whether `a` equals `b`, looking at `length` bytes of each (missing bytes read as 0) with no early exit.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8], over length: Int) -> Bool {
        var difference = UInt64(truncatingIfNeeded: a.count ^ b.count)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                for index in 0..<length {
                    let left = index < a.count ? a[index] : 0
                    let right = index < b.count ? b[index] : 0
                    difference |= UInt64(left ^ right)
                }
            }
        }
        return difference == 0
    }

    /// The token of an `Authorization: Bearer <token>` header, if there is one.
    static func bearer(_ request: HTTPRequest) -> String? {
        guard let value = request.headers["Authorization"] else { return nil }
        let trimmed = value.trimmingWhitespace()
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        return trimmed.dropFirst(7).trimmingWhitespace()
    }

    /// The CSRF check for writes: an `Origin` must be the server's own (the request's `Host`, over the
    /// request's scheme when that is known, else over http or https) or an allowed one; without `Origin`, `Sec-Fetch-Site: cross-site` is refused.
    /// Requests from curl and other non-browser clients carry neither and pass.
    func checkOrigin(_ request: HTTPRequest) throws(AccessError) {
        guard let header = request.headers["Origin"] else {
            if request.headers["Sec-Fetch-Site"]?.trimmingWhitespace().lowercased() == "cross-site" { throw .crossSite }
            return
        }
        guard let origin = Origin(parsing: header) else { throw .originNotAllowed(header) }
        if allowedOrigins.contains(origin) || isOwn(origin, request) { return }
        throw .originNotAllowed(header)
    }

    /// Whether `origin` is the origin the request was sent to.
    private func isOwn(_ origin: Origin, _ request: HTTPRequest) -> Bool {
        guard origin.scheme == "http" || origin.scheme == "https", !knowsScheme || origin.scheme == request.scheme,
            let host = request.headers["Host"],
            let own = Origin(scheme: origin.scheme, authority: host.trimmingWhitespace())
        else { return false }
        return own == origin
    }

    /// The allowed other origin the request comes from, if any (CORS answers name it).
    func allowedOrigin(of request: HTTPRequest) -> String? {
        guard !allowedOrigins.isEmpty, let header = request.headers["Origin"],
            let origin = Origin(parsing: header), allowedOrigins.contains(origin)
        else { return nil }
        return header.trimmingWhitespace()
    }
}

extension AccessControl {
    /// `text` with the value after every `access_token=`, `presence=` (presence keys own entries) and
    /// `Bearer ` replaced by `…`, for log lines whose text comes from elsewhere (libmicrohttpd's
    /// messages may quote a request).
    static func redactingTokens(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let marker = rest.firstRange(of: "access_token=") ?? rest.firstRange(of: "presence=")
            ?? rest.firstRange(of: "Bearer ")
        {
            out += rest[..<marker.upperBound] + "…"
            rest = rest[marker.upperBound...].drop { !" &\t'`\"\n".contains($0) }
        }
        return out + rest
    }
}
