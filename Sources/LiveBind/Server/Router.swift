/// Matches a request's method and path to a handler; a known path with the wrong method is a 405.
///
/// Patterns are written as paths: `/models/:name/*` has a literal segment, a one-segment parameter and
/// a rest that matches zero or more segments (captured with its leading `/`, or `""`).
struct Router: Sendable {
    /// A handler gets the request and the captured parameters in pattern order.
    typealias Handler = @Sendable (HTTPRequest, [String]) throws -> HTTPResponse

    private enum Segment: Sendable, Equatable {
        case literal(String), parameter, rest
    }

    private struct Route: Sendable {
        let methods: [HTTPMethod]
        let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    private var routes: [Route] = []
    /// Answers GET/HEAD requests no route matched (static files).
    var fallback: Handler?

    /// Adds a route for the given methods. `HEAD` is served by a `GET` route.
    mutating func add(_ methods: [HTTPMethod], _ pattern: String, _ handler: @escaping Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            switch part {
            case "*": .rest
            case _ where part.hasPrefix(":"): .parameter
            default: .literal(String(part))
            }
        }
        precondition(!segments.dropLast().contains(.rest), "'*' must end a route pattern: \(pattern)")
        routes.append(Route(methods: methods, pattern: pattern, segments: segments, handler: handler))
    }

    /// Every route's methods and pattern, in the order they were added (the OpenAPI drift test reads it).
    var table: [(methods: [HTTPMethod], pattern: String)] {
        routes.map { ($0.methods, $0.pattern) }
    }

    /// Routes a request; throws what the handler throws, or `RequestError.notFound`/`.methodNotAllowed`.
    func route(_ request: HTTPRequest) throws -> HTTPResponse {
        let parts = Self.segments(of: request.path)
        var allowed: [HTTPMethod] = []
        for route in routes {
            guard let captures = Self.match(route.segments, parts) else { continue }
            let method = request.method == .head ? HTTPMethod.get : request.method
            if route.methods.contains(method) { return try route.handler(request, captures) }
            allowed.append(contentsOf: route.methods)
        }
        if !allowed.isEmpty { throw RequestError.methodNotAllowed(allowed: allowed) }
        if let fallback, request.method == .get || request.method == .head {
            return try fallback(request, [])
        }
        if fallback != nil { throw RequestError.methodNotAllowed(allowed: [.get]) }
        throw RequestError.notFound(path: request.path)
    }

    /// The path's segments after the leading `/`, split at every `/` scalar: splitting Characters would
    /// miss a `/` that a combining mark after it joins into one Character (`/models/m/\u{0F80}x`).
    static func segments(of path: String) -> [String] {
        path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { String(String.UnicodeScalarView($0)) }
    }

    private static func match(_ segments: [Segment], _ parts: [String]) -> [String]? {
        var captures: [String] = []
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .rest:
                let rest = parts.dropFirst(position)
                captures.append(rest.isEmpty ? "" : "/" + rest.joined(separator: "/"))
                return captures
            case .literal(let text):
                guard position < parts.count, parts[position] == text else { return nil }
            case .parameter:
                guard position < parts.count, !parts[position].isEmpty else { return nil }
                captures.append(parts[position])
            }
        }
        return parts.count == segments.count ? captures : nil
    }
}
