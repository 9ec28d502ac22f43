import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `--trust-proxy`: `X-Forwarded-For` and `X-Forwarded-Proto` count only when the TCP peer is a
/// trusted proxy; they then give the client's address (write rate limits) and scheme (HSTS and the
/// same-origin check for writes). From any other peer they are ignored.
@Suite("Trusted proxies") struct TrustedProxyTests {
    /// Writes limited to one per client per 100 s, so the second write of a client is 429.
    static func oneWriteEach(trusting proxies: [String]) -> (inout LiveBindServer.Configuration) -> Void {
        { configuration in
            configuration.network.trustedProxies = proxies
            configuration.limits.writeRate = 0.01
            configuration.limits.writeBurst = 1
        }
    }

    static func write(_ port: Int, from forwarded: String, value: Int) throws -> Int {
        try TestHTTPClient.request(
            port: port, "POST", "/models/sensor",
            headers: [
                ("X-Forwarded-For", forwarded), ("Content-Type", "application/x-www-form-urlencoded")
            ], text: "t=\(value)"
        ).status
    }

    @Test func fromTheTrustedProxyTheForwardedAddressIsTheClient() throws {
        let store = Store()
        try store.put("sensor", [:])
        try withRunningServer(store: store, configure: Self.oneWriteEach(trusting: ["127.0.0.1"])) { (port: Int) throws in
            #expect(try Self.write(port, from: "10.0.0.1", value: 1) == 200)
            #expect(try Self.write(port, from: "10.0.0.1", value: 2) == 429)
            // Another client behind the same proxy has its own allowance.
            #expect(try Self.write(port, from: "10.0.0.2", value: 3) == 200)
            // What the client claimed left of the proxy's entry does not count: the rightmost
            // address that is not a trusted proxy does.
            #expect(try Self.write(port, from: "10.0.0.9, 10.0.0.1", value: 4) == 429)
            #expect(try Self.write(port, from: "10.0.0.3, 127.0.0.1", value: 5) == 200)
            #expect(try store.value(of: "sensor", at: Path(dotted: "t")) == 5)
        }
    }

    @Test func fromAnyOtherPeerForwardedHeadersAreIgnored() throws {
        let store = Store()
        try store.put("sensor", [:])
        // The tests connect from 127.0.0.1; only 127.0.0.2 is trusted.
        try withRunningServer(store: store, configure: Self.oneWriteEach(trusting: ["127.0.0.2"])) { (port: Int) throws in
            #expect(try Self.write(port, from: "10.0.0.1", value: 1) == 200)
            // A fresh made-up address buys nothing: the peer's own address is the client.
            #expect(try Self.write(port, from: "10.0.0.2", value: 2) == 429)
            #expect(try store.value(of: "sensor", at: Path(dotted: "t")) == 1)
        }
    }

    @Test func theForwardedSchemeCountsOnlyFromTheTrustedProxy() throws {
        for trusted in [true, false] {
            let store = Store()
            try store.put("sensor", ["t": 0])
            try withRunningServer(store: store, configure: { $0.network.trustedProxies = [trusted ? "127.0.0.1" : "127.0.0.2"] }) {
                (port: Int) throws in
                let read = try TestHTTPClient.request(port: port, "GET", "/models/sensor", headers: [("X-Forwarded-Proto", "https")])
                #expect((read.header("Strict-Transport-Security") != nil) == trusted)

                func write(origin: String, proto: String) throws -> TestHTTPResponse {
                    try TestHTTPClient.request(
                        port: port, "POST", "/models/sensor",
                        headers: [
                            ("X-Forwarded-Proto", proto), ("Origin", origin),
                            ("Content-Type", "application/x-www-form-urlencoded")
                        ], text: "t=1")
                }
                // A page served over https (through the proxy) writes with an https Origin.
                let https = try write(origin: "https://127.0.0.1:\(port)", proto: "https")
                #expect(https.status == (trusted ? 200 : 403))
                // Once the scheme is known, an http page is another origin.
                let http = try write(origin: "http://127.0.0.1:\(port)", proto: "https")
                #expect(http.status == (trusted ? 403 : 200))
                #expect(http.header("Content-Type") == "application/problem+json" || http.status == 200)
            }
        }
    }

    @Test func aTrustedProxyMustBeANumericAddress() throws {
        for bad in ["proxy.example", "10.0.0.0/8", "", "127.0.0.1:80"] {
            var configuration = LiveBindServer.Configuration()
            configuration.network.port = 0
            configuration.network.trustedProxies = [bad]
            #expect(throws: ServerError.invalidTrustedProxy(bad)) {
                try LiveBindServer(store: Store(), configuration: configuration).start()
            }
        }
        #expect(TrustedProxies.canonical("::ffff:127.0.0.1") == "127.0.0.1")
        #expect(TrustedProxies.canonical("0:0:0:0:0:0:0:1") == "::1")
    }
}
