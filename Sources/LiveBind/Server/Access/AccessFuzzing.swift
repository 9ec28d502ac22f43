import LiveBindEngine
internal import LiveBindHTTP
/// Entry points for the libFuzzer targets in `Fuzz/` (`@_spi(Fuzzing) import LiveBind`): the bearer and
/// cookie parsing of the access check, reached without a socket. Not part of the public API.
@_spi(Fuzzing) public enum AccessFuzzing {
    /// An access check with one static token and HS256 JWTs (with an audience), as a server has it.
    public final class Checker: Sendable {
        let access: AccessControl

        /// A checker accepting `token` and JWTs signed with `secret` for audience `audience`.
        public init(token: String, secret: String, audience: String) throws {
            var policy = AccessPolicy()
            policy.tokens = [AccessPolicy.Token(token)]
            policy.privateReads = true
            policy.jwt = AccessPolicy.JWT(key: Array(secret.utf8), audience: audience)
            access = AccessControl(
                policy: policy, verifier: try JWTVerifier(settings: policy.jwt!),
                sessions: SessionTable(capacity: 4, lifetime: .seconds(60)))
        }

        /// The scopes a `GET /events` with these header fields and query gets, or nil when it is refused
        /// (it must be refused with an `AccessError`: anything else is a bug).
        public func scopes(headers: [(String, String)], query: [(name: String, value: String)]) -> [String]? {
            var fields = HTTPHeaders()
            for (name, value) in headers { fields.add(name, value) }
            let request = HTTPRequest(method: .get, path: "/events", query: query, headers: fields)
            do {
                let grant = try access.grant(request, .scoped(model: .query("model"), queryToken: true), parameters: [])
                return grant.credential.map { credential in credential.scopes.map(\.rawValue).sorted() }
            } catch {
                return nil
            }
        }
    }

    /// The session id `SessionCookie` finds in these `Cookie` field values, if any.
    public static func sessionID(inCookies fields: [String]) -> String? {
        SessionCookie.value(in: fields)
    }
}
