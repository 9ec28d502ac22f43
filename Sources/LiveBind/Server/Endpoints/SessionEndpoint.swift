import DequeModule
import Foundation
import LiveBindEngine
internal import LiveBindHTTP

/// `POST /session` and `DELETE /session`: cookie sessions for browsers, so that `EventSource` (which
/// sends no headers) needs no token in its URL.
struct SessionEndpoint: Sendable {
    let sessions: SessionTable
    let hub: EventHub
    /// The presence entries joined with a session leave when it ends (none in a cluster).
    var rooms: PresenceRooms? = nil
    /// Whether the cookie always gets `Secure`; it does anyway on a request that came over https (TLS
    /// here, or `X-Forwarded-Proto` from a trusted proxy).
    let secureCookies: Bool

    private func secure(_ request: HTTPRequest) -> Bool { secureCookies || request.scheme == "https" }

    /// Starts a session carrying the bearer token's scopes and prefixes, ending no later than the token.
    /// Answers 201 with the session's end and reach, and the cookie; throws 503 when the table is full
    /// of other credentials' live sessions (see `SessionTable`).
    func create(_ request: HTTPRequest, _ grant: AccessControl.Grant, now: Date = Date()) throws(RequestError) -> HTTPResponse {
        var credential = grant.credential!  // a `.bearer` route always has one
        credential.session = nil
        if let actor = credential.actor, !actor.hasPrefix("session:") { credential.actor = "session:" + actor }
        let holder = SessionTable.holder(of: credential, token: AccessControl.bearer(request) ?? "")
        let (id, expiresAt, evicted) = try sessions.create(for: credential, holder: holder, now: now)
        if !evicted.isEmpty {
            hub.revoke(sessions: Set(evicted), reason: "session-ended")
            rooms?.endSessions(Set(evicted))
        }
        let seconds = Int(expiresAt.timeIntervalSince(now).rounded(.down))
        let scopes = AccessPolicy.Token.Scope.allCases.filter(credential.scopes.contains).map { JSON.string($0.rawValue) }
        let models = credential.prefixes.map { JSON.array(Deque($0.map(JSON.string))) } ?? .null
        let body: JSON = .object([
            "expires": .string(expiresAt.formatted(.iso8601)), "seconds": .int(seconds),
            "scopes": .array(Deque(scopes)), "models": models
        ])
        var response = HTTPResponse.bytes(body.encoded(), status: 201, contentType: "application/json")
        response.headers.add("Set-Cookie", SessionCookie.setting(id, seconds: seconds, secure: secure(request)))
        response.headers.add("Cache-Control", "no-store")
        return response
    }

    /// Ends the session of the request's cookie, if any, closing its streams with `auth_revoked`, and
    /// tells the browser to drop the cookie. 204 either way: ending no session is not an error.
    func end(_ request: HTTPRequest) -> HTTPResponse {
        if let id = SessionCookie.value(in: request.headers.values(of: "Cookie")), let key = sessions.remove(id) {
            hub.revoke(sessions: [key], reason: "session-ended")
            rooms?.endSessions([key])
        }
        var response = HTTPResponse(status: 204)
        response.headers.add("Set-Cookie", SessionCookie.clearing(secure: secure(request)))
        response.headers.add("Cache-Control", "no-store")
        return response
    }
}
