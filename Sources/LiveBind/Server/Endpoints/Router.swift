import LiveBindEngine
internal import LiveBindHTTP
/// Matches a request's method and path to a handler; a known path with the wrong method is a 405.
///
/// Patterns are written as paths: `/models/:name/*` has a literal segment, a one-segment parameter and
/// a rest that matches zero or more segments (captured with its leading `/`, or `""`). Every route
/// declares what it needs (`RouteAccess`); the router runs the one access check before the handler
/// and hands the handler what it established.
struct Router: Sendable {
    /// What a handler gets: the captured parameters in pattern order and what the access check established.
    struct Context: Sendable {
        /// The captured parameters, in pattern order.
        var parameters: [String]
        /// What the access check established for this request.
        var grant: AccessControl.Grant
    }

    /// A handler gets the request and its context.
    typealias Handler = @Sendable (HTTPRequest, Context) throws -> HTTPResponse
    /// The one access check: throws to refuse, else returns what the request may do.
    typealias Check = @Sendable (HTTPRequest, RouteAccess, [String]) throws -> AccessControl.Grant

    /// One route as declared: for listings (the access test, API documents).
    struct Entry: Sendable {
        /// The methods the route answers (`HEAD` is served by `GET`).
        let methods: [HTTPMethod]
        /// The pattern as written, such as `/models/:name/*`.
        let pattern: String
        /// What the route needs.
        let access: RouteAccess
    }

    private enum Segment: Sendable, Equatable {
        case literal(String), parameter, rest
    }

    private struct Route: Sendable {
        let entry: Entry
        let segments: [Segment]
        let handler: Handler
    }

    private var routes: [Route] = []
    /// Runs before every handler.
    private let check: Check
    /// Who a write is from, for the commit log's audit trail (`CommitOrigin`): asked once per write
    /// request that passed the access check; its commits (and those its bindings derive) carry it.
    var writeOrigin: (@Sendable (HTTPRequest, AccessControl.Grant) -> CommitOrigin)?
    /// Answers GET/HEAD requests no route matched (static files; always open).
    var fallback: (@Sendable (HTTPRequest) throws -> HTTPResponse)?

    /// A router whose routes are guarded by `check`.
    init(check: @escaping Check) {
        self.check = check
    }

    /// Every route in the order added.
    var entries: [Entry] { routes.map(\.entry) }

    /// Adds a route for the given methods with what it needs. `HEAD` is served by a `GET` route.
    mutating func add(_ methods: [HTTPMethod], _ pattern: String, access: RouteAccess, _ handler: @escaping Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            switch part {
            case "*": .rest
            case _ where part.hasPrefix(":"): .parameter
            default: .literal(String(part))
            }
        }
        precondition(!segments.dropLast().contains(.rest), "'*' must end a route pattern: \(pattern)")
        if case .parameter(let index) = access.models {
            precondition(
                index < segments.filter({ $0 == .parameter || $0 == .rest }).count,
                "route \(pattern) names parameter \(index) as its model, which it does not have")
        }
        routes.append(
            Route(
                entry: Entry(methods: methods, pattern: pattern, access: access), segments: segments,
                handler: handler))
    }

    /// Routes a request; throws what the check or the handler throws, or `RequestError.notFound`/`.methodNotAllowed`.
    func route(_ request: HTTPRequest) throws -> HTTPResponse {
        var path = request.path
        var allowed: [HTTPMethod] = []
        for index in routes.indices {
            guard let captures = path.withUTF8({ Self.match(routes[index].segments, $0) }) else { continue }
            let entry = routes[index].entry
            let method = request.method == .head ? HTTPMethod.get : request.method
            if entry.methods.contains(method) {
                let grant = try check(request, entry.access, captures)
                let context = Context(parameters: captures, grant: grant)
                guard method != .get, let writeOrigin else { return try routes[index].handler(request, context) }
                return try Store.$commitOrigin.withValue(writeOrigin(request, grant)) {
                    try routes[index].handler(request, context)
                }
            }
            allowed.append(contentsOf: entry.methods)
        }
        if !allowed.isEmpty { throw RequestError.methodNotAllowed(allowed: allowed) }
        if let fallback, request.method == .get || request.method == .head {
            return try fallback(request)
        }
        if fallback != nil { throw RequestError.methodNotAllowed(allowed: [.get]) }
        throw RequestError.notFound(path: request.path)
    }

    /// The path's segments after the leading `/`, split at every `/` scalar: splitting Characters would
    /// miss a `/` that a combining mark after it joins into one Character (`/models/m/\u{0F80}x`).
    ///
    /// Split on the UTF-8 bytes, which is the same: the byte of `/` occurs in UTF-8 only as that scalar,
    /// so every cut falls on a scalar boundary and each segment is a slice of `path`.
    static func segments(of path: String) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
            .map { String(path[$0.startIndex..<$0.endIndex]) }
    }

    /// Matches `segments` against the path's UTF-8 bytes, cut as ``segments(of:)`` cuts them, without
    /// making a string of any segment but the captured ones: every request tries several routes.
    private static func match(_ segments: [Segment], _ path: UnsafeBufferPointer<UInt8>) -> [String]? {
        let slash = UInt8(ascii: "/")
        // The first segment starts after the first `/`; without one, the path has none. `start` is past
        // the end once every segment of the path was used.
        var start = path.firstIndex(of: slash).map { $0 + 1 } ?? path.count + 1
        var captures: [String] = []
        // Allocated once, at the first capture: most routes tried do not match.
        func capture(_ text: String) {
            if captures.isEmpty { captures.reserveCapacity(segments.count) }
            captures.append(text)
        }
        for segment in segments {
            if case .rest = segment {
                capture(start > path.count ? "" : String(decoding: path[(start - 1)...], as: UTF8.self))
                return captures
            }
            guard start <= path.count else { return nil }
            var end = start
            while end < path.count && path[end] != slash { end += 1 }
            let part = UnsafeBufferPointer(rebasing: path[start..<end])
            switch segment {
            case .literal(let text):
                guard text.utf8.elementsEqual(part) else { return nil }
            case .parameter:
                guard !part.isEmpty else { return nil }
                capture(String(decoding: part, as: UTF8.self))
            case .rest:
                break
            }
            start = end + 1
        }
        return start > path.count ? captures : nil
    }
}
