import Foundation
import JWTKit
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `--max-sessions-per-credential` and a full `--max-sessions` table: one token holder cannot end
/// other holders' sessions, however many sessions it makes.
@Suite("Sessions per credential") struct SessionsPerCredentialTests {
    /// A JWT payload with a subject, which the shared test claims do not carry.
    struct SubjectClaims: JWTPayload {
        var exp: ExpirationClaim
        var sub: SubjectClaim?
        var scope: String
        /// Makes two tokens of one subject differ.
        var nonce: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    static func jwt(subject: String?) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: TestJWT.secret), digestAlgorithm: .sha256)
        return try await keys.sign(
            SubjectClaims(
                exp: .init(value: Date().addingTimeInterval(300)), sub: subject.map { .init(value: $0) },
                scope: "read", nonce: UUID().uuidString))
    }

    /// `POST /session` with `token`: the answer and its cookie pair (`livebind_session=…`).
    static func startSession(_ port: Int, token: String) throws -> (TestHTTPResponse, String?) {
        let response = try TestHTTPClient.request(port: port, "POST", "/session", headers: TestTokens.bearer(token), text: "")
        return (response, response.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
    }

    static func cookie(_ port: Int, token: String) throws -> String {
        let (response, cookie) = try startSession(port, token: token)
        #expect(response.status == 201)
        return try #require(cookie)
    }

    static func status(_ port: Int, cookie: String) throws -> Int {
        try TestHTTPClient.request(port: port, "GET", "/models", headers: [("Cookie", cookie)]).status
    }

    static func privateReads(_ configuration: inout LiveBindServer.Configuration) {
        configuration.access.policy = TestTokens.policy
        configuration.access.policy.privateReads = true
    }

    @Test func pastItsCapACredentialEndsItsOwnOldestSessionOnly() throws {
        try withRunningServer(configure: {
            Self.privateReads(&$0); $0.access.maxSessionsPerCredential = 2
        }) { (port: Int) throws in
            let admin = try Self.cookie(port, token: TestTokens.admin)
            let first = try Self.cookie(port, token: TestTokens.reader)
            let stream = try TestEventStream(port: port, target: "/events", headers: [("Cookie", first)])
            #expect(stream.status == 200)
            let second = try Self.cookie(port, token: TestTokens.reader)
            #expect(try Self.status(port, cookie: first) == 200)
            let third = try Self.cookie(port, token: TestTokens.reader)  // one past the cap: ends `first`
            #expect(try Self.status(port, cookie: first) == 401)
            var types: [String] = []
            while let event = try stream.next() { types.append(event.type) }
            #expect(types.last == "auth_revoked")
            for live in [second, third, admin] { #expect(try Self.status(port, cookie: live) == 200) }
        }
    }

    @Test func aFullTableOfOthersLiveSessionsRefusesWith503InsteadOfEndingOne() throws {
        try withRunningServer(configure: {
            Self.privateReads(&$0)
            $0.access.maxSessions = 2
            $0.access.sessionLifetime = .seconds(30)
        }) { (port: Int) throws in
            let admin = try Self.cookie(port, token: TestTokens.admin)
            let lab = try Self.cookie(port, token: TestTokens.lab)
            let (refused, cookie) = try Self.startSession(port, token: TestTokens.reader)
            #expect(refused.isProblem(503))
            #expect(cookie == nil)
            let retryAfter = try #require(refused.header("Retry-After").flatMap { Int($0) })
            #expect((1...30).contains(retryAfter))  // when the soonest session ends
            #expect((try refused.object()["detail"] as? String)?.contains("--max-sessions") == true)
            #expect(try Self.status(port, cookie: admin) == 200)
            #expect(try Self.status(port, cookie: lab) == 200)
            // A credential that holds a session makes room by ending its own oldest.
            let again = try Self.cookie(port, token: TestTokens.admin)
            #expect(try Self.status(port, cookie: admin) == 401)
            #expect(try Self.status(port, cookie: lab) == 200)
            #expect(try Self.status(port, cookie: again) == 200)
            // Ending one frees its place for anyone.
            _ = try TestHTTPClient.request(port: port, "DELETE", "/session", headers: [("Cookie", lab)])
            #expect(try Self.startSession(port, token: TestTokens.reader).0.status == 201)
        }
    }

    @Test func jwtsOfOneSubjectAreOneCredentialAndJWTsWithoutOneAreEachTheirOwn() async throws {
        let (alice1, alice2, bob) = (
            try await Self.jwt(subject: "alice"), try await Self.jwt(subject: "alice"), try await Self.jwt(subject: "bob")
        )
        let (anonymous1, anonymous2) = (try await Self.jwt(subject: nil), try await Self.jwt(subject: nil))
        try withRunningServer(configure: {
            $0.access.policy = TestJWT.policy(); $0.access.maxSessionsPerCredential = 1
        }) { (port: Int) throws in
            let first = try Self.cookie(port, token: alice1)
            let others = try [bob, anonymous1, anonymous2].map { try Self.cookie(port, token: $0) }
            let second = try Self.cookie(port, token: alice2)  // alice's second session ends her first
            #expect(try Self.status(port, cookie: first) == 401)
            for live in others + [second] { #expect(try Self.status(port, cookie: live) == 200) }
        }
    }
}
