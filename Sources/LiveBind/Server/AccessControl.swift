/// Applies an `AccessPolicy` to requests: bearer tokens, scopes, model prefixes and the `Origin` check.
///
/// Tokens are compared in constant time: every configured token is compared over the same number of
/// bytes, whatever matches, so the answer's timing does not tell how much of a guess was right.
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

    init(policy: AccessPolicy, listeningOn address: String = "0.0.0.0", knowsScheme: Bool = false) {
        self.policy = policy
        self.knowsScheme = knowsScheme
        loopbackOnly = Self.isLoopback(address: address)
        secrets = policy.tokens.map { Array($0.secret.utf8) }
        comparedLength = secrets.map(\.count).max() ?? 0
        allowedOrigins = Set(policy.allowedOrigins.compactMap(Origin.init(parsing:)))
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

    /// What the request may reach with `scope`; throws 401 (no or unknown token) or 403 (no such scope).
    /// `?access_token=` counts only when `queryToken` is set (`GET /events`: EventSource sends no headers).
    func authorize(_ request: HTTPRequest, _ scope: AccessPolicy.Token.Scope,
                   queryToken: Bool = false) throws(AccessError) -> Reach {
        let needed = scope == .write ? policy.requiresTokens : policy.privateReads
        guard needed else { return .everything }
        guard let presented = Self.bearer(request) ?? (queryToken ? request.queryValue("access_token") : nil),
              !presented.isEmpty else {
            throw .missingToken(forStream: queryToken)
        }
        guard let token = match(presented) else { throw .invalidToken }
        guard token.scopes.contains(scope) else { throw .missingScope(scope) }
        return Reach(prefixes: token.models)
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
              let own = Origin(scheme: origin.scheme, authority: host.trimmingWhitespace()) else { return false }
        return own == origin
    }

    /// The allowed other origin the request comes from, if any (CORS answers name it).
    func allowedOrigin(of request: HTTPRequest) -> String? {
        guard !allowedOrigins.isEmpty, let header = request.headers["Origin"],
              let origin = Origin(parsing: header), allowedOrigins.contains(origin) else { return nil }
        return header.trimmingWhitespace()
    }
}

extension AccessControl {
    /// `text` with the value after every `access_token=` and `Bearer ` replaced by `…`, for log lines
    /// whose text comes from elsewhere (libmicrohttpd's messages may quote a request).
    static func redactingTokens(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let marker = rest.firstRange(of: "access_token=") ?? rest.firstRange(of: "Bearer ") {
            out += rest[..<marker.upperBound] + "…"
            rest = rest[marker.upperBound...].drop { !" &\t'`\"\n".contains($0) }
        }
        return out + rest
    }
}
