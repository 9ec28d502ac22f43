import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Cookie sessions (`POST /session`): a browser trades its bearer token for an `HttpOnly` cookie, so
/// that `EventSource` needs no token in its URL.
@Suite("Cookie sessions") struct SessionTests {
    private func seeded() throws -> Store {
        let store = Store()
        try store.put("lab-1", ["t": 1])
        try store.put("other", ["t": 1])
        return store
    }

    /// `POST /session` with `token`; returns the answer and the cookie pair (`livebind_session=…`).
    private func startSession(_ port: Int, token: String) throws -> (TestHTTPResponse, String?) {
        let response = try TestHTTPClient.request(port: port, "POST", "/session", headers: [("Authorization", "Bearer \(token)")], text: "")
        let cookie = response.header("Set-Cookie")?.split(separator: ";").first.map(String.init)
        return (response, cookie)
    }

    @Test func aSessionCookieIsHttpOnlyStrictAndCarriesTheTokensReach() throws {
        try withRunningServer(
            store: try seeded(),
            configure: {
                $0.access.policy = TestTokens.policy; $0.access.policy.privateReads = true
            }
        ) { (port: Int) throws in
            let (response, cookie) = try startSession(port, token: TestTokens.lab)
            #expect(response.status == 201)
            let setCookie = try #require(response.header("Set-Cookie"))
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/"))
            #expect(!setCookie.contains("Secure"))
            let id = try #require(cookie?.split(separator: "=").last)
            #expect(id.count == 64 && id.allSatisfy(\.isHexDigit))
            let body = try response.object()
            #expect(body["scopes"] as? [String] == ["read", "write"])
            #expect(body["models"] as? [String] == ["lab-"])
            let header = [("Cookie", try #require(cookie))]
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/lab-1", headers: header).status == 200)
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/other", headers: header).isProblem(403))
            let write = try TestHTTPClient.request(
                port: port, "PUT", "/models/lab-1/t",
                headers: header + [("Content-Type", "application/json")], text: "5")
            #expect(write.status == 200)
        }
    }

    @Test func secureCookiesGetSecure() throws {
        try withRunningServer(configure: {
            $0.access.policy = TestTokens.policy; $0.access.secureCookies = true
        }) { (port: Int) throws in
            let (response, _) = try startSession(port, token: TestTokens.admin)
            #expect(response.header("Set-Cookie")?.hasSuffix("; Secure") == true)
            let ended = try TestHTTPClient.request(port: port, "DELETE", "/session")
            #expect(ended.header("Set-Cookie")?.contains("Max-Age=0") == true)
            #expect(ended.header("Set-Cookie")?.hasSuffix("; Secure") == true)
        }
    }

    @Test func aStreamOpensWithTheCookieAndNoTokenInItsURL() throws {
        let store = try seeded()
        try withRunningServer(
            store: store,
            configure: {
                $0.access.policy = TestTokens.policy; $0.access.policy.privateReads = true
            }
        ) { (port: Int) throws in
            let (_, cookie) = try startSession(port, token: TestTokens.lab)
            let stream = try TestEventStream(port: port, target: "/events", headers: [("Cookie", try #require(cookie))])
            #expect(stream.status == 200)
            let snapshot = try #require(try stream.next())
            #expect(snapshot.type == "snapshot")
            #expect(try snapshot.object()["model"] as? String == "lab-1")
            try store.set(2, at: Path(pointer: "/t"), in: "other")
            try store.set(3, at: Path(pointer: "/t"), in: "lab-1")
            let change = try #require(try stream.next())
            #expect(try change.object()["model"] as? String == "lab-1")
        }
    }

    @Test func cookieWritesStillPassTheOriginCheck() throws {
        let store = try seeded()
        try withRunningServer(store: store, configure: { $0.access.policy = TestTokens.policy }) { (port: Int) throws in
            let (_, cookie) = try startSession(port, token: TestTokens.admin)
            let header = [("Cookie", try #require(cookie)), ("Content-Type", "application/json")]
            let crossOrigin = try TestHTTPClient.request(
                port: port, "PUT", "/models/lab-1/t",
                headers: header + [("Origin", "https://evil.example")], text: "9")
            #expect(crossOrigin.isProblem(403))
            let crossSite = try TestHTTPClient.request(
                port: port, "PUT", "/models/lab-1/t",
                headers: header + [("Sec-Fetch-Site", "cross-site")], text: "9")
            #expect(crossSite.isProblem(403))
            let own = try TestHTTPClient.request(
                port: port, "PUT", "/models/lab-1/t",
                headers: header + [("Origin", "http://127.0.0.1:\(port)")], text: "9")
            #expect(own.status == 200)
        }
        #expect(try store.snapshot("lab-1").revision == 2)
    }

    @Test func endingASessionRefusesItsCookieAndClosesItsStreams() throws {
        try withRunningServer(
            store: try seeded(),
            configure: {
                $0.access.policy = TestTokens.policy; $0.access.policy.privateReads = true
            }
        ) { (port: Int) throws in
            let (_, cookie) = try startSession(port, token: TestTokens.admin)
            let header = [("Cookie", try #require(cookie))]
            let stream = try TestEventStream(port: port, target: "/events", headers: header)
            _ = try stream.next(2)
            #expect(try TestHTTPClient.request(port: port, "DELETE", "/session", headers: header).status == 204)
            let revoked = try #require(try stream.next())
            #expect(revoked.type == "auth_revoked")
            #expect(try revoked.object()["reason"] as? String == "session-ended")
            #expect(try stream.next() == nil)
            let after = try TestHTTPClient.request(port: port, "GET", "/models", headers: header)
            #expect(after.isProblem(401))
            #expect(after.text.contains("POST /session"))
        }
    }

    @Test func aSessionEndsNoLaterThanItsJWT() async throws {
        let token = try await TestJWT.hs256(.valid(for: 2, scope: "read"))
        try withRunningServer(store: try seeded(), configure: { $0.access.policy = TestJWT.policy() }) { (port: Int) throws in
            let (response, cookie) = try startSession(port, token: token)
            #expect(response.status == 201)
            #expect((try response.object()["seconds"] as? Int).map { $0 <= 2 } == true)
            #expect(
                response.header("Set-Cookie")?.contains("Max-Age=1") == true || response.header("Set-Cookie")?.contains("Max-Age=2") == true
            )
            let header = [("Cookie", try #require(cookie))]
            let stream = try TestEventStream(port: port, target: "/events?model=lab-1", headers: header)
            #expect(try stream.next()?.type == "snapshot")
            #expect(try stream.next()?.type == "auth_revoked")
            #expect(try TestHTTPClient.request(port: port, "GET", "/models", headers: header).isProblem(401))
        }
    }

    @Test func theSessionTableIsBoundedAndEvictsTheOldest() throws {
        try withRunningServer(
            store: try seeded(),
            configure: {
                $0.access.policy = TestTokens.policy
                $0.access.policy.privateReads = true
                $0.access.maxSessions = 2
            }
        ) { (port: Int) throws in
            let cookies = try (0..<3).map { _ in try #require(try startSession(port, token: TestTokens.reader).1) }
            let stream = try TestEventStream(port: port, target: "/events", headers: [("Cookie", cookies[1])])
            _ = try stream.next(2)
            let fourth = try #require(try startSession(port, token: TestTokens.reader).1)  // evicts cookies[1]
            #expect(try TestHTTPClient.request(port: port, "GET", "/models", headers: [("Cookie", cookies[0])]).isProblem(401))
            #expect(try TestHTTPClient.request(port: port, "GET", "/models", headers: [("Cookie", cookies[1])]).isProblem(401))
            #expect(try stream.next()?.type == "auth_revoked")
            for cookie in [cookies[2], fourth] {
                #expect(try TestHTTPClient.request(port: port, "GET", "/models", headers: [("Cookie", cookie)]).status == 200)
            }
        }
    }

    @Test func aSessionNeedsABearerTokenNotACookieOrQuery() throws {
        try withRunningServer(configure: { $0.access.policy = TestTokens.policy }) { (port: Int) throws in
            let (_, cookie) = try startSession(port, token: TestTokens.admin)
            #expect(
                try TestHTTPClient.request(port: port, "POST", "/session", headers: [("Cookie", try #require(cookie))], text: "").isProblem(
                    401))
            #expect(try TestHTTPClient.request(port: port, "POST", "/session?access_token=\(TestTokens.admin)", text: "").isProblem(401))
            let crossSite = try TestHTTPClient.request(
                port: port, "POST", "/session",
                headers: [("Authorization", "Bearer \(TestTokens.admin)"), ("Origin", "https://evil.example")], text: "")
            #expect(crossSite.isProblem(403))
        }
    }

    @Test func withoutTokensThereAreNoSessions() throws {
        try withRunningServer { (port: Int) throws in
            #expect(try TestHTTPClient.request(port: port, "POST", "/session", text: "").status == 404)
            #expect(
                try TestHTTPClient.request(port: port, "GET", "/healthz").text == #"{"status":"ok","version":"\#(LiveBindVersion.string)"}"#
            )
        }
        try withRunningServer(configure: { $0.access.policy = TestTokens.policy }) { (port: Int) throws in
            #expect(
                try TestHTTPClient.request(port: port, "GET", "/healthz").text
                    == #"{"status":"ok","version":"\#(LiveBindVersion.string)","sessions":true}"#)
        }
    }

    @Test func sessionCookiesAreFoundAmongOthersAndMalformedOnesSkipped() {
        let id = String(repeating: "0f", count: 32)
        #expect(SessionCookie.value(in: ["a=b; livebind_session=\(id); c=d"]) == id)
        #expect(SessionCookie.value(in: ["livebind_session=\"\(id)\""]) == id)
        #expect(SessionCookie.value(in: ["x=1", " livebind_session = \(id) "]) == id)
        #expect(SessionCookie.value(in: ["livebind_session=\(id.uppercased())"]) == nil)
        #expect(SessionCookie.value(in: ["livebind_session=\(id)0"]) == nil)
        #expect(SessionCookie.value(in: ["livebind_sessionx=\(id)", "livebind_session="]) == nil)
        #expect(SessionCookie.value(in: ["livebind_session=bad; livebind_session=\(id)"]) == id)
        #expect(SessionID.make() != SessionID.make())
        #expect(SessionID.isWellFormed(Array(SessionID.make().utf8)))
    }
}
