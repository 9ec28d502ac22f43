import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindHTTP
@testable import LiveBindEngine

/// `Public/openapi.json` is the HTTP contract: these tests hold the route table and the running
/// server to it, so a route cannot be added without documenting it, nor documented without existing.
@Suite("OpenAPI document") struct OpenAPIDocumentTests {
    /// The repository's `Public/` folder.
    static let publicDirectory = repositoryRoot().appendingPathComponent("Public").path
    /// Methods that are OpenAPI operations (HEAD is served wherever GET is, and not listed).
    static let methods = ["get", "put", "post", "patch", "delete"]

    static func document() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: publicDirectory + "/openapi.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every documented operation as "METHOD /path/{template}".
    static func documentedOperations() throws -> Set<String> {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        var operations: Set<String> = []
        for (path, item) in paths {
            for method in methods where item[method] != nil { operations.insert("\(method.uppercased()) \(path)") }
        }
        return operations
    }

    /// The server's route table, read from the router it builds: with tokens, so that the routes only a
    /// server with tokens has (`/session`) are in it too.
    static func routeTable() throws -> [(methods: [HTTPMethod], pattern: String)] {
        let server = LiveBindServer(store: Store())
        let hub = EventHub(store: server.store, settings: .init(retainedEvents: 16, maxStreams: 1))
        var policy = AccessPolicy()
        policy.tokens = [.init("drift-test-token")]
        let access = AccessControl(policy: policy, sessions: SessionTable(capacity: 1, lifetime: .seconds(60)))
        return try server.makeRouter(hub: hub, access: access).entries.map { ($0.methods, $0.pattern) }
    }

    /// The OpenAPI paths a router pattern stands for: `:name` is `{name}`, and a trailing `*` (zero or
    /// more segments) is the path without it and the path with a `{pointer}`.
    static func documentedPaths(for pattern: String) -> [String] {
        let segments = pattern.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
        guard segments.last == "*" else { return ["/" + segments.joined(separator: "/")] }
        let base = "/" + segments.dropLast().joined(separator: "/")
        return [base, base + "/{pointer}"]
    }

    @Test func everyRouteIsDocumented() throws {
        let documented = try Self.documentedOperations()
        let table = try Self.routeTable()
        #expect(table.count >= 7)
        for route in table {
            for method in route.methods {
                for path in Self.documentedPaths(for: route.pattern) {
                    #expect(
                        documented.contains("\(method.rawValue) \(path)"),
                        "route \(method.rawValue) \(route.pattern) is missing from Public/openapi.json as \(path)")
                }
            }
        }
    }

    @Test func everyDocumentedOperationIsRouted() throws {
        let operations = try Self.documentedOperations()
        #expect(operations.count >= 20)
        // With a token, so that the routes only such a server has (`/session`) are there too.
        try withRunningServer(configure: {
            $0.network.publicDirectory = Self.publicDirectory
            $0.access.policy.tokens = [.init(Self.token)]
        }) { port in
            for operation in operations.sorted() {
                let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
                let (method, template) = (parts[0], parts[1])
                try Self.makeFixtures(port: port)
                // A window can only be moved on a stream that is open: its id is the stream's first event.
                var stream: TestEventStream?
                if template.contains("{stream}") {
                    stream = try TestEventStream(port: port, target: "/events?sub=fixture/list", headers: Self.authorization)
                }
                let streamID = try stream.map { try #require(try $0.next()?.object()["stream"] as? String) } ?? ""
                let target = template.replacingOccurrences(of: "{name}", with: "fixture")
                    .replacingOccurrences(of: "{pointer}", with: "list")
                    .replacingOccurrences(of: "{id}", with: "fixture-binding")
                    .replacingOccurrences(of: "{file}", with: "livebind.js")
                    .replacingOccurrences(of: "{stream}", with: streamID)
                let status: Int
                if template == "/events" {
                    status = try TestEventStream(port: port, target: target, headers: Self.authorization).status
                } else {
                    let body: [UInt8]? = ["PUT", "POST", "PATCH"].contains(method) ? Array("{}".utf8) : nil
                    status = try TestHTTPClient.request(port: port, method, target, headers: Self.authorization, body: body).status
                }
                #expect(status != 404 && status != 405, "\(operation) (as \(method) \(target)) answered \(status)")
                #expect(status < 500, "\(operation) (as \(method) \(target)) answered \(status)")
            }
        }
    }

    static let token = "openapi-drift-test-token"
    static let authorization = [("Authorization", "Bearer \(token)")]

    @Test func servedDocumentIsTheRepositorysFile() throws {
        try withRunningServer(configure: { $0.network.publicDirectory = Self.publicDirectory }) { port in
            let response = try TestHTTPClient.request(port: port, "GET", "/openapi.json")
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            let file = try Data(contentsOf: URL(fileURLWithPath: Self.publicDirectory + "/openapi.json"))
            #expect(response.body == Array(file))
        }
    }

    @Test func documentCarriesTheServersVersion() throws {
        let info = try #require(try Self.document()["info"] as? [String: Any])
        #expect(info["version"] as? String == LiveBindVersion.string)
        #expect(try Self.document()["openapi"] as? String == "3.1.0")
    }

    /// A model `fixture` with a list, and a binding `fixture-binding`, made again before each request
    /// so that a DELETE before it leaves nothing missing.
    private static func makeFixtures(port: Int) throws {
        let model = try TestHTTPClient.request(
            port: port, "PUT", "/models/fixture",
            headers: [("Content-Type", "application/json")] + authorization,
            text: #"{"list":[1],"copy":null}"#)
        #expect(model.status == 200 || model.status == 201)
        let binding = try TestHTTPClient.request(port: port, "GET", "/bindings/fixture-binding", headers: authorization)
        if binding.status == 404 {
            let made = try TestHTTPClient.request(
                port: port, "POST", "/bindings", headers: [("Content-Type", "application/json")] + authorization,
                text: #"{"id":"fixture-binding","source":"fixture.list","target":"fixture.copy"}"#)
            #expect(made.status == 201)
        }
    }
}
