import Foundation
import JWTKit
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// JSON Web Tokens beside static tokens (`--jwt-key`): keys of three kinds, claims mapped to scopes and
/// model prefixes, time, audience and issuer checks, and streams that end when their token expires.
@Suite("JWT bearer tokens") struct JWTTests {
    private func seeded() throws -> Store {
        let store = Store()
        try store.put("lab-1", ["t": 1])
        try store.put("other", ["t": 1])
        return store
    }

    private func put(_ port: Int, _ target: String, token: String) throws -> TestHTTPResponse {
        try TestHTTPClient.request(
            port: port, "PUT", target,
            headers: [
                ("Authorization", "Bearer \(token)"),
                ("Content-Type", "application/json")
            ], text: "7")
    }

    private func get(_ port: Int, _ target: String, token: String) throws -> TestHTTPResponse {
        try TestHTTPClient.request(port: port, "GET", target, headers: [("Authorization", "Bearer \(token)")])
    }

    @Test func anHS256TokenReadsAndWritesWhatItsClaimsAllow() async throws {
        let writer = try await TestJWT.hs256(.valid(scope: "read write", models: ["lab-"]))
        let reader = try await TestJWT.hs256(.valid(scope: "read"))
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestJWT.policy() }) { (port: Int) throws in
            #expect(try put(port, "/models/lab-1/t", token: writer).status == 200)
            #expect(try put(port, "/models/other/t", token: writer).isProblem(403))
            #expect(try put(port, "/models/lab-1/t", token: reader).isProblem(403))
            #expect(try get(port, "/models/other", token: reader).status == 200)
            let listed = try get(port, "/models", token: writer).text
            #expect(listed.contains("lab-1") && !listed.contains("other"))
            // Static tokens keep working beside JWTs.
            #expect(try put(port, "/models/other/t", token: TestTokens.admin).status == 200)
        }
        #expect(try store.snapshot("lab-1").value["t"] == 7)
    }

    @Test func anRS256TokenIsVerifiedWithAPublicKeyInPEM() async throws {
        let token = try await TestJWT.rs256(.valid())
        let forged = try await TestJWT.hs256(.valid(), secret: try TestJWT.fixture("jwt-test-rsa-public"))
        let store = try seeded()
        try withRunningServer(
            store: store, configure: { $0.access.policy = TestJWT.policy(key: try! TestJWT.fixture("jwt-test-rsa-public")) }
        ) { (port: Int) throws in
            #expect(try put(port, "/models/lab-1/t", token: token).status == 200)
            // Algorithm confusion: HS256 "signed" with the public key's PEM as the secret.
            let refused = try put(port, "/models/lab-1/t", token: forged)
            #expect(refused.isProblem(401))
            #expect(refused.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        }
        #expect(try store.snapshot("lab-1").revision == 2)
    }

    @Test func anES256TokenPicksItsKeyFromAJWKSByKid() async throws {
        let key = ES256PrivateKey()
        let jwks = try TestJWT.jwks(key, kid: "k1")
        let token = try await TestJWT.es256(.valid(), key: key, kid: "k1")
        let stranger = try await TestJWT.es256(.valid(), key: ES256PrivateKey(), kid: "k1")
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestJWT.policy(key: jwks) }) { (port: Int) throws in
            #expect(try put(port, "/models/lab-1/t", token: token).status == 200)
            #expect(try put(port, "/models/lab-1/t", token: stranger).isProblem(401))
        }
    }

    @Test func audienceAndIssuerMustMatchWhenConfigured() async throws {
        var good = TestJWT.Claims.valid()
        good.aud = "livebind"
        good.iss = "https://issuer.test"
        var wrongAudience = good
        wrongAudience.aud = "another-app"
        var wrongIssuer = good
        wrongIssuer.iss = "https://elsewhere.test"
        var noAudience = good
        noAudience.aud = nil
        let tokens = (
            ok: try await TestJWT.hs256(good), aud: try await TestJWT.hs256(wrongAudience),
            iss: try await TestJWT.hs256(wrongIssuer), none: try await TestJWT.hs256(noAudience)
        )
        try withRunningServer(
            store: try seeded(),
            configure: {
                $0.access.policy = TestJWT.policy(audience: "livebind", issuer: "https://issuer.test")
            }
        ) { (port: Int) throws in
            #expect(try put(port, "/models/lab-1/t", token: tokens.ok).status == 200)
            let audience = try put(port, "/models/lab-1/t", token: tokens.aud)
            #expect(audience.isProblem(401))
            #expect(audience.text.contains("audience"))
            #expect(try put(port, "/models/lab-1/t", token: tokens.iss).text.contains("issuer"))
            #expect(try put(port, "/models/lab-1/t", token: tokens.none).isProblem(401))
        }
    }

    @Test func aTokenWithoutScopeMayDoNothing() async throws {
        let token = try await TestJWT.hs256(.valid(scope: nil))
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = TestJWT.policy() }) { (port: Int) throws in
            #expect(try get(port, "/models/lab-1", token: token).isProblem(403))
            #expect(try put(port, "/models/lab-1/t", token: token).isProblem(403))
        }
    }

    @Test func aStreamGetsAuthRevokedWhenItsTokenExpiresWithoutWaitingForAnEvent() async throws {
        let token = try await TestJWT.hs256(.valid(for: 2, scope: "read"))
        try withRunningServer(
            store: try seeded(),
            configure: {
                $0.access.policy = TestJWT.policy()
                $0.streams.heartbeat = .seconds(60)
            }
        ) { (port: Int) throws in
            let clock = ContinuousClock()
            let start = clock.now
            let stream = try TestEventStream(
                port: port, target: "/events?model=lab-1",
                headers: [("Authorization", "Bearer \(token)")], timeout: 10)
            #expect(stream.status == 200)
            #expect(try stream.next()?.type == "snapshot")
            let revoked = try #require(try stream.next())
            let waited = clock.now - start
            #expect(revoked.type == "auth_revoked")
            #expect(try revoked.object()["reason"] as? String == "expired")
            #expect(waited > .milliseconds(900) && waited < .seconds(4), "revoked after \(waited)")
            #expect(try stream.next() == nil)
            // The same token no longer opens a stream.
            let again = try TestEventStream(port: port, target: "/events", headers: [("Authorization", "Bearer \(token)")])
            #expect(again.status == 401)
            let metrics = try get(port, "/metrics", token: TestTokens.admin).text
            #expect(metrics.contains("livebind_streams_auth_revoked_total 1"))
        }
    }

    @Test func aBadKeyFileStopsTheStartWithAMessage() throws {
        for (key, words) in [
            ("short", "at least 32 bytes"), ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "private key"),
            ("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", "neither"), (#"{"keys":[]}"#, "no keys")
        ] {
            var configuration = LiveBindServer.Configuration()
            configuration.network.port = 0
            configuration.access.policy = TestJWT.policy(key: key)
            let server = LiveBindServer(store: Store(), configuration: configuration)
            #expect {
                try server.start()
            } throws: { error in
                "\(error)".contains(words)
            }
        }
    }
}
