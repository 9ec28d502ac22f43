import LiveBindEngine
/// What a route needs before its handler runs, declared where the route is declared and enforced by
/// one check (`AccessControl.grant`), so that no handler can forget it.
///
/// For a `.scoped` route the scope follows the method: `GET` and `HEAD` need `read` (only with
/// `privateReads`), every other method needs `write` and passes the `Origin` check first.
struct RouteAccess: Sendable, Equatable {
    /// Who may call the route.
    enum Rule: Sendable, Equatable {
        /// Anyone; the check reads no credential (`/healthz`, ending a session). Unsafe methods still
        /// pass the `Origin` check.
        case open
        /// `read` for `GET`/`HEAD`, `write` for other methods, as the access policy asks.
        case scoped
        /// Any accepted bearer token in `Authorization`, whatever its scopes, even when the policy
        /// would need none (`POST /session`); unsafe methods pass the `Origin` check first.
        case bearer
    }

    /// Where the model a request reaches is named, so that the check can hold it against the
    /// credential's model prefixes.
    enum Models: Sendable, Equatable {
        /// The route reaches no one model (or its handler checks what it reaches with the `Reach`).
        case none
        /// The route parameter at this index (`/models/:name/*` has the name at 0).
        case parameter(Int)
        /// Every value of this query parameter (`/events?model=a&model=b`).
        case query(String)
    }

    /// Who may call the route.
    var rule: Rule
    /// Which model the request reaches.
    var models: Models = .none
    /// For a `.scoped` route, the scope it needs whatever the method; nil: by method (see above).
    var scope: AccessPolicy.Token.Scope? = nil
    /// Whether `?access_token=` counts as a credential (only `GET /events`: `EventSource` sends no headers).
    var queryToken = false

    /// Anyone may call it.
    static let open = RouteAccess(rule: .open)
    /// `read` or `write` by method, on no one model.
    static let scoped = RouteAccess(rule: .scoped)

    /// `read` or `write` by method, on the model named by a route parameter or a query parameter.
    static func scoped(model: Models, queryToken: Bool = false) -> RouteAccess {
        RouteAccess(rule: .scoped, models: model, queryToken: queryToken)
    }
}
