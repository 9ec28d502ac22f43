import LiveBindEngine
/// Why a request was refused by the access policy: no or an unknown token (401), or a token or
/// origin that may not do this (403). Messages never contain a token.
enum AccessError: Error, Equatable, CustomStringConvertible {
    /// The request needs a token and carries none.
    case missingToken(forStream: Bool)
    /// The token is not one the server accepts.
    case invalidToken
    /// The token is a JWT (or too long to be any token) that was refused, and why.
    case rejectedToken(String)
    /// The session cookie names no live session (it ended, expired or was evicted).
    case unknownSession
    /// The token lacks the scope this request needs.
    case missingScope(AccessPolicy.Token.Scope)
    /// The token's model prefixes do not cover this model.
    case modelNotCovered(String)
    /// With private reads, a JSON Patch `test` (which reads the model) by a token without `read`.
    case testNeedsRead(String)
    /// With private reads, `/metrics` (which counts every model) asked by a token with model prefixes.
    case metricsNeedEveryModel
    /// A write from a page of another origin that is not allowed.
    case originNotAllowed(String)
    /// A write a browser marked `Sec-Fetch-Site: cross-site`, without an allowed `Origin`.
    case crossSite
    /// A loopback-only server asked for by another host name (DNS rebinding).
    case hostNotAllowed(String)

    /// A message a user can act on.
    var description: String {
        switch self {
        case .missingToken(let stream):
            stream
                ? "this server needs a token: send Authorization: Bearer <token>, a session cookie (POST /session), or ?access_token=<token> on /events"
                : "this server needs a token: send Authorization: Bearer <token> (browsers: a session cookie from POST /session)"
        case .invalidToken:
            "the bearer token is not one this server accepts"
        case .rejectedToken(let reason):
            "the bearer token was refused: \(reason)"
        case .unknownSession:
            "the session has ended (expired, signed out or evicted): POST /session with the token again"
        case .missingScope(let scope):
            "this token lacks the \"\(scope.rawValue)\" scope"
        case .modelNotCovered(let model):
            "this token does not reach model \"\(model)\" (its model prefixes do not cover it)"
        case .testNeedsRead(let model):
            "a JSON Patch test reads the model: this token may write \"\(model)\" but not read it"
        case .metricsNeedEveryModel:
            "the metrics count every model: reading them needs a token without model prefixes"
        case .originNotAllowed(let origin):
            "write refused from origin \(origin): not this server's origin; start the server with --allow-origin \(origin) to allow it"
        case .crossSite:
            "cross-site write refused (Sec-Fetch-Site: cross-site): send it from this server's pages or an --allow-origin origin"
        case .hostNotAllowed(let host):
            "Host '\(host)' refused: this server listens on loopback and answers only localhost, 127.x.x.x and [::1] "
                + "(a guard against DNS rebinding); behind a proxy, add --allow-origin with the public origin"
        }
    }
}
