import Foundation
import LiveBind
@testable import LiveBindEngine
import Testing

/// The bearer-token part of the bad-input catalogue, against a server that takes static tokens and
/// HS256 JWTs with an audience and an issuer: every hostile token gets 401 problem+json with
/// `WWW-Authenticate: Bearer error="invalid_token"`, and changes nothing.
extension BadInputTests {
    /// A name and the token to present.
    static func hostileTokens() async throws -> [(String, String)] {
        var base = TestJWT.Claims.valid()
        base.aud = "livebind"
        base.iss = "https://issuer.test"
        let good = try await TestJWT.hs256(base)
        let parts = good.split(separator: ".").map(String.init)
        var expired = base
        expired.exp = .init(value: Date().addingTimeInterval(-120))
        var notYet = base
        notYet.nbf = .init(value: Date().addingTimeInterval(600))
        var wrongAudience = base
        wrongAudience.aud = "someone-else"
        var wrongIssuer = base
        wrongIssuer.iss = "https://elsewhere.test"
        var noExpiry = base
        noExpiry.exp = nil
        var widened = base
        widened.models = nil
        widened.scope = "read write admin"
        let otherBody = TestJWT.base64URL(#"{"exp":4102444800,"scope":"read write","aud":"livebind","iss":"https://issuer.test"}"#)
        let noneHeader = TestJWT.base64URL(#"{"alg":"none","typ":"JWT"}"#)
        return [
            ("alg none, no signature", noneHeader + "." + parts[1] + "."),
            ("alg none, the real signature", noneHeader + "." + parts[1] + "." + parts[2]),
            ("HS256 signed with another secret", try await TestJWT.hs256(base, secret: "another-secret-of-enough-length-0123456789")),
            ("RS256 header on an HS256 token", TestJWT.base64URL(#"{"alg":"RS256","typ":"JWT"}"#) + "." + parts[1] + "." + parts[2]),
            ("RS256 token for an HS256 server", try await TestJWT.rs256(base)),
            ("expired", try await TestJWT.hs256(expired)),
            ("not yet valid", try await TestJWT.hs256(notYet)),
            ("wrong audience", try await TestJWT.hs256(wrongAudience)),
            ("wrong issuer", try await TestJWT.hs256(wrongIssuer)),
            ("no exp claim", try await TestJWT.hs256(noExpiry)),
            ("signature over another body", parts[0] + "." + otherBody + "." + parts[2]),
            (
                "claims widened after signing",
                parts[0] + "." + TestJWT.base64URL(String(decoding: try JSONEncoder().encode(widened), as: UTF8.self)) + "." + parts[2]
            ),
            ("signature cut short", parts[0] + "." + parts[1] + "." + parts[2].dropLast(4)),
            ("signature not base64url", parts[0] + "." + parts[1] + ".***"),
            ("two parts", parts[0] + "." + parts[1]),
            ("four parts", good + ".x"),
            ("empty parts", ".."),
            ("header not JSON", TestJWT.base64URL("{nope") + "." + parts[1] + "." + parts[2]),
            ("payload not JSON", parts[0] + "." + TestJWT.base64URL("[1,2") + "." + parts[2]),
            ("exp of the wrong type", parts[0] + "." + TestJWT.base64URL(#"{"exp":"tomorrow"}"#) + "." + parts[2]),
            ("oversized (64 KB)", parts[0] + "." + String(repeating: "A", count: 65_536) + "." + parts[2]),
            ("just over --max-token-length", String(repeating: "a", count: 2000) + "." + String(repeating: "b", count: 2095) + ".c"),
            ("a static token with a dot", TestTokens.admin + ".x.y")
        ]
    }

    @Test func everyHostileBearerTokenIs401AndChangesNothing() async throws {
        let tokens = try await Self.hostileTokens()
        let store = Store()
        try store.put("lab-1", ["t": 1])
        try withRunningServer(
            store: store,
            configure: {
                $0.access.policy = TestJWT.policy(audience: "livebind", issuer: "https://issuer.test")
            }
        ) { (port: Int) throws in
            for (name, token) in tokens {
                for (method, target, body) in [
                    ("PUT", "/models/lab-1/t", "2"), ("GET", "/models/lab-1", ""),
                    ("POST", "/session", "")
                ] {
                    let response = try TestHTTPClient.request(
                        port: port, method, target,
                        headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], text: body)
                    // libmicrohttpd refuses header lines past its connection memory itself (431).
                    if token.utf8.count > 8000 {
                        #expect([401, 431].contains(response.status), "\(name) \(method): \(response.status)")
                        continue
                    }
                    #expect(response.isProblem(401), "\(name) \(method) \(target): \(response.status) \(response.text)")
                    #expect(response.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true, "\(name)")
                    #expect(!response.text.contains(token), "\(name): the answer quotes the token")
                }
                let stream = try TestEventStream(port: port, target: "/events?access_token=\(token)")
                #expect(stream.status == 401 || (token.utf8.count > 8000 && stream.status == 414), "\(name) on /events: \(stream.status)")
            }
        }
        #expect(try store.snapshot("lab-1").revision == 1)
        #expect(try store.snapshot("lab-1").value["t"] == 1)
    }
}
