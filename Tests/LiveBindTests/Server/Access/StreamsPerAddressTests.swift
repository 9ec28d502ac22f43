import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `--max-streams-per-address`: one client address cannot take every stream. Every test client
/// connects from 127.0.0.1, so the addresses come from a trusted proxy's `X-Forwarded-For`, as they
/// would behind nginx.
@Suite("Streams per address") struct StreamsPerAddressTests {
    static func proxied(_ configuration: inout LiveBindServer.Configuration) {
        configuration.network.trustedProxies = ["127.0.0.1"]
        configuration.streams.maxStreamsPerAddress = 2
        configuration.streams.heartbeat = .milliseconds(100)  // a closed client is noticed at the next write
    }

    static func open(_ port: Int, from address: String?, headers: [(String, String)] = []) throws -> TestEventStream {
        try TestEventStream(port: port, target: "/events", headers: headers + (address.map { [("X-Forwarded-For", $0)] } ?? []))
    }

    /// Opens streams from `address` until one is 200, for at most `seconds`: the share of a stream
    /// that ended comes back once the server has noticed.
    static func openOnceReleased(
        _ port: Int, from address: String, headers: [(String, String)] = [],
        seconds: Double = 5
    ) throws -> TestEventStream {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let stream = try open(port, from: address, headers: headers)
            if stream.status == 200 || Date() > deadline { return stream }
            usleep(50_000)
        }
    }

    @Test func oneStreamPastTheCapIs503AndOtherAddressesStillGetThrough() throws {
        try withRunningServer(configure: Self.proxied) { (port: Int) throws in
            let held = try (0..<2).map { _ in try Self.open(port, from: "203.0.113.7") }
            #expect(held.allSatisfy { $0.status == 200 })
            let refused = try Self.open(port, from: "203.0.113.7")
            #expect(refused.status == 503)
            let problem = TestHTTPResponse(status: refused.status, headers: refused.headers, body: refused.errorBody)
            #expect(problem.isProblem(503))
            #expect(problem.header("Retry-After") != nil)
            let detail = try #require(try problem.object()["detail"] as? String)
            #expect(detail.contains("--max-streams-per-address") && detail.contains("limit 2"))
            // What the client wrote left of the proxy's entry does not count: its address is still .7.
            #expect(try Self.open(port, from: "198.51.100.1, 203.0.113.7").status == 503)
            // Another client behind the proxy, and clients on this machine, are not held back.
            #expect(try (0..<2).map { _ in try Self.open(port, from: "203.0.113.8") }.allSatisfy { $0.status == 200 })
            #expect(try (0..<3).map { _ in try Self.open(port, from: nil) }.allSatisfy { $0.status == 200 })
            withExtendedLifetime(held) {}
        }
    }

    @Test func aStreamGivesItsShareBackWhenItsClientLeaves() throws {
        try withRunningServer(configure: Self.proxied) { (port: Int) throws in
            var held = try (0..<2).map { _ in try Self.open(port, from: "203.0.113.7") }
            #expect(try Self.open(port, from: "203.0.113.7").status == 503)
            held.removeFirst()  // closes its socket
            let reopened = try Self.openOnceReleased(port, from: "203.0.113.7")
            #expect(reopened.status == 200)
            #expect(try Self.open(port, from: "203.0.113.7").status == 503)
            withExtendedLifetime((held, reopened)) {}
        }
    }

    @Test func aStreamGivesItsShareBackWhenItIsRevoked() throws {
        try withRunningServer(configure: {
            Self.proxied(&$0); $0.access.policy = TestTokens.policy; $0.access.policy.privateReads = true
        }) { (port: Int) throws in
            let session = try TestHTTPClient.request(
                port: port, "POST", "/session", headers: TestTokens.bearer(TestTokens.reader), text: "")
            let cookie = [("Cookie", try #require(session.header("Set-Cookie")?.split(separator: ";").first.map(String.init)))]
            let revoked = try Self.open(port, from: "203.0.113.7", headers: cookie)
            let other = try Self.open(port, from: "203.0.113.7", headers: TestTokens.bearer(TestTokens.admin))
            #expect(revoked.status == 200 && other.status == 200)
            #expect(try Self.open(port, from: "203.0.113.7", headers: TestTokens.bearer(TestTokens.admin)).status == 503)
            _ = try TestHTTPClient.request(port: port, "DELETE", "/session", headers: cookie)
            var types: [String] = []
            while let event = try revoked.next() { types.append(event.type) }
            #expect(types.last == "auth_revoked")
            // The client still holds its socket open: the share came back when the server ended the stream.
            #expect(try Self.openOnceReleased(port, from: "203.0.113.7", headers: TestTokens.bearer(TestTokens.admin)).status == 200)
            withExtendedLifetime((revoked, other)) {}
        }
    }

    @Test func aStreamRefusedForAnotherReasonTakesNoShare() throws {
        try withRunningServer(configure: {
            Self.proxied(&$0); $0.streams.maxStreams = 1
        }) { (port: Int) throws in
            var held: TestEventStream? = try Self.open(port, from: "203.0.113.7")
            #expect(held?.status == 200)
            // Past --max-streams: the hub refuses them after the address's share was taken, which must come back.
            for _ in 0..<3 {
                let refused = try Self.open(port, from: "203.0.113.8")
                #expect(refused.status == 503)
                #expect(String(decoding: refused.errorBody, as: UTF8.self).contains("raise --max-streams"))
            }
            held = nil
            // Had the refusals kept .8's shares, it would be refused for its address from now on.
            let opened = try Self.openOnceReleased(port, from: "203.0.113.8")
            #expect(opened.status == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func withoutAProxyTheTCPPeerIsTheClient() throws {
        try withRunningServer(configure: {
            $0.streams.maxStreamsPerAddress = 2
            $0.countsLoopbackStreams = true  // these clients are on loopback aliases; real ones are not
        }) { (port: Int) throws in
            let held = try (0..<2).map { _ in try TestBoundSocket(port: port, from: "127.0.0.3") }
            for socket in held { #expect(try socket.status(of: "/events") == 200) }
            #expect(try TestBoundSocket(port: port, from: "127.0.0.3").status(of: "/events") == 503)
            // Forwarded headers from a peer that is not a trusted proxy change nothing.
            let claiming = try TestBoundSocket(port: port, from: "127.0.0.3")
            #expect(try claiming.status(of: "/events", headers: [("X-Forwarded-For", "203.0.113.9")]) == 503)
            #expect(try TestBoundSocket(port: port, from: "127.0.0.4").status(of: "/events") == 200)
            withExtendedLifetime(held) {}
        }
    }

    @Test func loopbackClientsAreNotCounted() throws {
        try withRunningServer(configure: { $0.streams.maxStreamsPerAddress = 1 }) { (port: Int) throws in
            let streams = try (0..<3).map { _ in try TestEventStream(port: port, target: "/events") }
            #expect(streams.allSatisfy { $0.status == 200 })
        }
    }

    @Test func noCapWhenZero() throws {
        try withRunningServer(configure: {
            Self.proxied(&$0); $0.streams.maxStreamsPerAddress = 0
        }) { (port: Int) throws in
            #expect(try (0..<4).map { _ in try Self.open(port, from: "203.0.113.7") }.allSatisfy { $0.status == 200 })
        }
    }
}
