/// Why a request cannot be answered, independent of the engine: routing, media types, limits.
///
/// Public, not `package`: `LiveBind`'s fuzzing entry points (`@_spi(Fuzzing)`) throw it, and name it
/// for the fuzz targets. This module is no product, so nothing outside the package imports it.
public enum RequestError: Error, Equatable, CustomStringConvertible {
    /// Nothing lives at this path.
    case notFound(path: String)
    /// The path exists but not for this method.
    case methodNotAllowed(allowed: [HTTPMethod])
    /// The body's media type is not one this endpoint reads.
    case unsupportedMediaType(given: String?, accepted: [String])
    /// The body is malformed for its media type (bad JSON, bad form encoding).
    case malformedBody(String)
    /// A header or query value is malformed.
    case badRequest(String)
    /// The body is larger than the limit.
    case bodyTooLarge(limit: Int)
    /// A write came without a body length.
    case lengthRequired
    /// A well-formed JSON Patch that cannot apply to the model as it stands (RFC 5789: 422).
    case patchNotApplicable(String)
    /// `If-Match` does not name a revision.
    case invalidPrecondition(String)
    /// `If-Match: *` on a model that does not exist.
    case nothingToMatch(String)
    /// `If-Match` gave a weak tag (`W/"3"`), which never matches: If-Match compares strongly.
    case weakPrecondition(String)
    /// Too many event streams are open.
    case tooManyStreams(limit: Int)
    /// The streams show `--max-views` distinct views already.
    case tooManyViews(limit: Int)
    /// A new view would take the elements all views arrange past `--max-view-rows`.
    case tooManyViewRows(limit: Int)
    /// The streams together hold `--max-unsent-bytes` unsent, even after cutting those that read nothing.
    case unsentBytesSpent(limit: Int)
    /// The snapshots (or the `since=` replay) one request asks for (`bytes`, measured before they are
    /// made) reach `--max-unsent-bytes` on their own: the request can never be served as it is.
    case snapshotsTooLarge(bytes: Int, limit: Int)
    /// The client's address holds `--max-streams-per-address` event streams already.
    case tooManyStreamsFromAddress(limit: Int)
    /// The session table holds `--max-sessions` live sessions, none of them the token's; the soonest
    /// ends in about `retryAfter` seconds.
    case tooManySessions(limit: Int, retryAfter: Int)
    /// The server is stopping.
    case shuttingDown
    /// The client wrote faster than `--write-rate` allows; it may again in `retryAfter` seconds.
    case tooManyWrites(retryAfter: Int, rate: Double, burst: Int)
    /// A `sub` value (or a `PATCH /events/{stream}` body) that does not name a location or a window.
    case invalidSubscription(String, String)
    /// More `sub` values on one stream than `--max-subscriptions`.
    case tooManySubscriptions(given: Int, limit: Int)
    /// A view's query past `--max-view-terms`, `--max-view-in` or `--max-view-query-bytes` (`setting`).
    case viewQueryTooLarge(String, reason: String, setting: String, limit: Int)
    /// A window of more rows than `--max-window`.
    case windowTooLarge(String, rows: Int, limit: Int)
    /// A `sub` the stream cannot take: it overlaps a whole model the stream has, or repeats a location.
    case conflictingSubscription(String, String)
    /// `PATCH /events/{stream}` named a stream that is not open.
    case unknownStream
    /// `PATCH /events/{stream}` named a location the stream does not subscribe to.
    case unknownSubscription(String)

    /// The `Allow` header value: the methods, with `HEAD` wherever `GET` is.
    package static func allowHeader(_ allowed: [HTTPMethod]) -> String {
        var names: [String] = []
        for method in allowed where !names.contains(method.rawValue) { names.append(method.rawValue) }
        if names.contains("GET") && !names.contains("HEAD") { names.insert("HEAD", at: names.firstIndex(of: "GET")! + 1) }
        return names.joined(separator: ", ")
    }

    /// A message a user can act on.
    public var description: String {
        switch self {
        case .notFound(let path): "nothing at '\(path)': see GET /models for the models there are"
        case .methodNotAllowed(let allowed):
            "method not allowed here; allowed: \(Self.allowHeader(allowed))"
        case .unsupportedMediaType(let given, let accepted):
            "unsupported Content-Type '\(given ?? "none")'; send one of: \(accepted.joined(separator: ", "))"
        case .malformedBody(let reason): "malformed body: \(reason)"
        case .badRequest(let reason): reason
        case .patchNotApplicable(let reason): "the JSON Patch cannot apply: \(reason); nothing was changed"
        case .bodyTooLarge(let limit): "request body larger than \(limit) bytes; send less or raise --body-limit"
        case .lengthRequired: "a body is required: send Content-Length (or chunked) with a JSON body"
        case .nothingToMatch(let model):
            "If-Match: * holds only for a model that exists, and model '\(model)' does not; without If-Match, PUT creates it"
        case .weakPrecondition(let value):
            "If-Match \(value) is a weak tag, which never matches (If-Match compares strongly); send the ETag as the server wrote it"
        case .invalidPrecondition(let value):
            "If-Match must be a quoted revision such as \"3\" (from the ETag), not \(value)"
        case .tooManyStreams(let limit): "too many event streams open (limit \(limit)); retry later or raise --max-streams"
        case .tooManyViews(let limit):
            "the streams show \(limit) distinct views already (--max-views); retry later, or share a view another stream shows"
        case .tooManyViewRows(let limit):
            "this view would take the elements all views arrange past \(limit) (--max-view-rows); retry later, or share a view another stream shows"
        case .unsentBytesSpent(let limit):
            "the open event streams hold \(limit) bytes unsent (--max-unsent-bytes); retry later"
        case .snapshotsTooLarge(let bytes, let limit):
            "what this stream would hold before its client reads (its snapshots, or its since= replay) takes about \(bytes) bytes, more than all streams may hold unsent (\(limit), --max-unsent-bytes); ask for fewer or smaller models, locations, windows or views, or a shorter replay"
        case .tooManyStreamsFromAddress(let limit):
            "too many event streams open from this address (limit \(limit), --max-streams-per-address); close one or retry later"
        case .tooManySessions(let limit, let retryAfter):
            "the server holds its most live sessions (\(limit), --max-sessions), none of them this token's; retry in \(retryAfter) s or raise --max-sessions"
        case .shuttingDown: "the server is shutting down; retry shortly"
        case .invalidSubscription(let sub, let reason): "invalid sub '\(sub)': \(reason)"
        case .tooManySubscriptions(let given, let limit):
            "\(given) sub values on one stream; at most \(limit) (--max-subscriptions): open another stream or raise it"
        case .windowTooLarge(let sub, let rows, let limit):
            "sub '\(sub)' asks for a window of \(rows) rows; at most \(limit) (--max-window)"
        case .viewQueryTooLarge(let sub, let reason, let setting, _):
            "sub '\(sub)': \(reason) (--\(setting)); ask for a smaller view"
        case .conflictingSubscription(let sub, let reason): "sub '\(sub)' \(reason)"
        case .unknownStream: "no open event stream has this id: it ended, or the id is wrong; use the id of the stream's `stream` event"
        case .unknownSubscription(let sub): "this stream has no sub '\(sub)'; name one of the stream's sub values (without the window)"
        case .tooManyWrites(let retryAfter, let rate, let burst):
            "too many writes from this client: \(burst) at once and \(rate.formatted()) a second after that (--write-rate, --write-burst); retry in \(retryAfter) s"
        }
    }
}
