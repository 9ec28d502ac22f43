import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Tokens used by the access tests: an admin (everything), a lab writer (models `lab-…`), a reader.
enum TestTokens {
    static let admin = "admin-7f3c9e1b5d2a4c6e"
    static let lab = "lab-writer-0a1b2c3d4e5f"
    static let reader = "reader-99887766554433"

    static var policy: AccessPolicy {
        var policy = AccessPolicy()
        policy.tokens = [
            .init(admin),
            .init(lab, scopes: [.read, .write], models: ["lab-"], name: "lab"),
            .init(reader, scopes: [.read], name: "reader")
        ]
        return policy
    }

    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }
}

@Suite("Access control: tokens, scopes, model prefixes") struct AccessControlTests {
    /// Every kind of model write, as (method, target, media type, body).
    static let writes: [(String, String, String, String)] = [
        ("PUT", "/models/lab-1", "application/json", #"{"t":99,"list":[]}"#),
        ("PUT", "/models/lab-1/t", "application/json", "99"),
        ("POST", "/models/lab-1", "application/x-www-form-urlencoded", "t=99"),
        ("POST", "/models/lab-1/list", "application/json", "99"),
        ("PATCH", "/models/lab-1", "application/merge-patch+json", #"{"t":99}"#),
        ("PATCH", "/models/lab-1", "application/json-patch+json", #"[{"op":"replace","path":"/t","value":99}]"#),
        ("DELETE", "/models/lab-1/t", "application/json", ""),
        ("DELETE", "/models/lab-1", "application/json", "")
    ]

    private func seeded() throws -> Store {
        let store = Store()
        try store.put("lab-1", ["t": 1, "list": []])
        try store.put("other", ["t": 1])
        return store
    }

    private func send(_ port: Int, _ write: (String, String, String, String), token: String?) throws -> TestHTTPResponse {
        let (method, target, type, body) = write
        return try TestHTTPClient.send(
            port: port, method, target, body, type: type,
            headers: token.map(TestTokens.bearer) ?? [])
    }

    @Test func writesWithoutATokenAre401AndChangeNothing() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            for write in Self.writes {
                let response = try send(port, write, token: nil)
                #expect(response.isProblem(401), "\(write.0) \(write.1): \(response.status) \(response.text)")
                #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            }
            #expect(try store.snapshot("lab-1").revision == 1)
        }
    }

    @Test(arguments: ["wrong", TestTokens.admin + "x", String(TestTokens.admin.dropLast()), "Admin-7f3c9e1b5d2a4c6e"])
    func anUnknownTokenIs401(_ token: String) throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            for write in Self.writes {
                let response = try send(port, write, token: token)
                #expect(response.isProblem(401))
                #expect(response.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
            }
            #expect(try store.snapshot("lab-1").revision == 1)
        }
    }

    @Test func aTokenWithoutTheWriteScopeIs403() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            for write in Self.writes {
                let response = try send(port, write, token: TestTokens.reader)
                #expect(response.isProblem(403))
                #expect(response.header("WWW-Authenticate")?.contains("insufficient_scope") == true)
            }
            #expect(try store.snapshot("lab-1").revision == 1)
        }
    }

    @Test func aTokenWhosePrefixesMissTheModelIs403() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            for write in Self.writes {
                let (method, target, type, body) = write
                let other = target.replacingOccurrences(of: "lab-1", with: "other")
                let response = try send(port, (method, other, type, body), token: TestTokens.lab)
                #expect(response.isProblem(403), "\(method) \(other): \(response.status)")
                #expect(
                    try response.object()["detail"] as? String
                        == #"this token does not reach model "other" (its model prefixes do not cover it)"#)
            }
            #expect(try store.snapshot("other").revision == 1)
            let create = try TestHTTPClient.send(port: port, "PUT", "/models/lab", "{}", headers: TestTokens.bearer(TestTokens.lab))
            #expect(create.isProblem(403), "'lab' does not start with 'lab-'")
        }
    }

    @Test func theRightTokenWrites() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            for (index, write) in Self.writes.enumerated() {
                let response = try send(port, write, token: index.isMultiple(of: 2) ? TestTokens.lab : TestTokens.admin)
                #expect((200...201).contains(response.status), "\(write.0) \(write.1): \(response.status) \(response.text)")
            }
            #expect(throws: StoreError.self) { try store.snapshot("lab-1") }  // the last write dropped it
            let lowercase = try TestHTTPClient.send(
                port: port, "PUT", "/models/lab-2", "{}",
                headers: [("authorization", "bearer  \(TestTokens.lab) ")])
            #expect(lowercase.status == 201, "the scheme is case-insensitive; spaces around the token are ignored")
        }
    }

    @Test func aQueryTokenDoesNotAuthorizeWrites() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { port in
            let response = try TestHTTPClient.send(port: port, "PUT", "/models/lab-1/t?access_token=\(TestTokens.admin)", "5")
            #expect(response.isProblem(401))
            #expect(try store.snapshot("lab-1").revision == 1)
        }
    }

    @Test func readsStayOpenWithoutPrivate() throws {
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = TestTokens.policy }) { port in
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/other").status == 200)
            #expect(try TestHTTPClient.request(port: port, "GET", "/models").text.contains("other"))
            #expect(try TestHTTPClient.request(port: port, "GET", "/bindings").status == 200)
            #expect(try TestHTTPClient.request(port: port, "GET", "/metrics").status == 200)
            let stream = try TestEventStream(port: port, target: "/events?model=other")
            #expect(stream.status == 200)
        }
    }

    @Test func bindingWritesNeedBothModelsCovered() throws {
        let store = try seeded()
        try store.put("lab-2", [:])
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { (port: Int) throws -> Void in
            let lab = TestTokens.bearer(TestTokens.lab), admin = TestTokens.bearer(TestTokens.admin)
            let crossing = #"{"id":"x","source":"lab-1.t","target":"other.copy"}"#
            #expect(try TestHTTPClient.send(port: port, "POST", "/bindings", crossing).isProblem(401))
            #expect(try TestHTTPClient.send(port: port, "POST", "/bindings", crossing, headers: lab).isProblem(403))
            let reversed = #"{"id":"y","source":"other.t","target":"lab-1.copy"}"#
            #expect(try TestHTTPClient.send(port: port, "POST", "/bindings", reversed, headers: lab).isProblem(403))
            #expect(
                try TestHTTPClient.send(port: port, "POST", "/bindings", crossing, headers: TestTokens.bearer(TestTokens.reader)).isProblem(
                    403))
            #expect(try store.value(of: "other", at: Path(dotted: "t")) == 1)
            #expect((try? store.value(of: "other", at: Path(dotted: "copy"))) == nil)

            #expect(try TestHTTPClient.send(port: port, "POST", "/bindings", crossing, headers: admin).status == 201)
            let inside = #"{"id":"inside","source":"lab-1.t","target":"lab-2.copy"}"#
            #expect(try TestHTTPClient.send(port: port, "POST", "/bindings", inside, headers: lab).status == 201)
            #expect(try store.value(of: "lab-2", at: Path(dotted: "copy")) == 1)

            let disable = #"{"enabled":false}"#
            // A binding outside the token's reach does not exist for it: 404 as for an unknown id, with
            // nothing of its models in the answer (a 403 named "other", a model the token may not know of).
            for (method, body) in [("PATCH", disable), ("DELETE", "")] {
                let answer = try TestHTTPClient.send(port: port, method, "/bindings/x", body, headers: lab)
                let unknown = try TestHTTPClient.send(port: port, method, "/bindings/nothing-here", body, headers: lab)
                #expect(answer.isProblem(404), "\(method)")
                #expect(
                    answer.text.replacingOccurrences(of: "\"x\"", with: "\"nothing-here\"")
                        .replacingOccurrences(of: "'x'", with: "'nothing-here'") == unknown.text, "\(method)")
                #expect(!answer.text.contains("other"), "\(method): \(answer.text)")
            }
            #expect(try TestHTTPClient.request(port: port, "DELETE", "/bindings/x").isProblem(401))
            #expect(try TestHTTPClient.getObject(port: port, "/bindings/x")["enabled"] as? Bool == true)
            #expect(try TestHTTPClient.send(port: port, "PATCH", "/bindings/inside", disable, headers: lab).status == 200)
            #expect(try TestHTTPClient.request(port: port, "DELETE", "/bindings/inside", headers: lab).status == 200)
            #expect(try TestHTTPClient.request(port: port, "DELETE", "/bindings/x", headers: admin).status == 200)
        }
    }
}
