import Foundation
import Logging
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The one authorization layer: every route in the table declares what it needs, and the check runs
/// before its handler. Walking the table means a route added later is tested without being listed.
@Suite("Route access: one check for every route") struct RouteAccessTests {
    /// The only routes anyone may call: health, and ending a session (which needs none).
    static let openRoutes: Set<String> = ["GET /healthz", "DELETE /session"]

    /// A concrete path for a route pattern: parameters become `lab-1` (models) or `b1`, a rest `/t`.
    static func path(for pattern: String) -> String {
        pattern.split(separator: "/").map { part -> String in
            switch part {
            case ":name": "lab-1"
            case "*": "t"
            case _ where part.hasPrefix(":"): "b1"
            default: String(part)
            }
        }.reduce("") { $0 + "/" + $1 }
    }

    /// Starts a server with static tokens, JWTs, `--private` and a public folder; runs `body` with its
    /// port and route table.
    static func withGuardedServer(_ body: (Int, [Router.Entry]) throws -> Void) throws {
        let store = Store()
        try store.put("lab-1", ["t": 1])
        try withPublicDirectory { directory in
            var configuration = LiveBindServer.Configuration()
            configuration.network.port = 0
            configuration.access.policy = TestJWT.policy()
            configuration.network.publicDirectory = directory
            var logger = Logger(label: "livebind.test")
            logger.logLevel = .warning
            let server = LiveBindServer(store: store, configuration: configuration, logger: logger)
            try server.start()
            defer { server.stop() }
            try body(server.port, server.routeTable)
        }
        #expect(try store.snapshot("lab-1").revision == 1)
    }

    @Test func everyRouteRefusesARequestWithoutCredentials() throws {
        try Self.withGuardedServer { (port: Int, routes: [Router.Entry]) throws in
            #expect(routes.count >= 8)
            var checked = 0
            for route in routes {
                for method in route.methods + (route.methods.contains(.get) ? [.head] : []) {
                    let name = "\(method.rawValue) \(route.pattern)"
                    guard !Self.openRoutes.contains(name.replacingOccurrences(of: "HEAD", with: "GET")) else { continue }
                    let body: [UInt8]? = method == .get || method == .head ? nil : Array("{}".utf8)
                    let response = try TestHTTPClient.request(
                        port: port, method.rawValue, Self.path(for: route.pattern),
                        headers: body == nil ? [] : [("Content-Type", "application/json")], body: body)
                    #expect(response.status == 401, "\(name): \(response.status) \(response.text)")
                    if method != .head { #expect(response.header("Content-Type") == "application/problem+json", "\(name)") }
                    #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(name)")
                    checked += 1
                }
            }
            #expect(checked >= 12)
        }
    }

    @Test func everyRouteRefusesAnUnknownTokenOrSession() throws {
        try Self.withGuardedServer { (port: Int, routes: [Router.Entry]) throws in
            let forged = String(repeating: "ab", count: 32)
            for route in routes {
                for method in route.methods {
                    let name = "\(method.rawValue) \(route.pattern)"
                    guard !Self.openRoutes.contains(name) else { continue }
                    let body: [UInt8]? = method == .get ? nil : Array("{}".utf8)
                    for credential in [("Authorization", "Bearer not-a-token"), ("Cookie", "livebind_session=\(forged)")] {
                        if route.access.rule == .bearer && credential.0 == "Cookie" { continue }
                        let response = try TestHTTPClient.request(
                            port: port, method.rawValue, Self.path(for: route.pattern),
                            headers: [credential] + (body == nil ? [] : [("Content-Type", "application/json")]), body: body)
                        #expect(response.status == 401, "\(name) with \(credential.0): \(response.status) \(response.text)")
                        #expect(response.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true, "\(name)")
                    }
                }
            }
        }
    }

    @Test func onlyHealthAndEndingASessionAreOpen() throws {
        try Self.withGuardedServer { (port: Int, routes: [Router.Entry]) throws in
            let open = Set(
                routes.filter { $0.access.rule == .open }.flatMap { route in route.methods.map { "\($0.rawValue) \(route.pattern)" } })
            #expect(open == Self.openRoutes)
            #expect(try TestHTTPClient.request(port: port, "GET", "/healthz").status == 200)
            #expect(try TestHTTPClient.request(port: port, "DELETE", "/session").status == 204)
            // Static files are the fallback, outside the table, and open.
            #expect(try TestHTTPClient.request(port: port, "GET", "/app.js").status == 200)
        }
    }

    @Test func everyPatternIsListedWithItsMethods() throws {
        try Self.withGuardedServer { (_: Int, routes: [Router.Entry]) throws in
            let listed = routes.map { "\($0.methods.map(\.rawValue).joined(separator: ",")) \($0.pattern)" }
            #expect(listed.contains("GET /events"))
            #expect(listed.contains("GET,PUT,DELETE,PATCH,POST /models/:name/*"))
            #expect(listed.contains("POST /session"))
        }
    }
}
