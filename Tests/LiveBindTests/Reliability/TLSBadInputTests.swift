import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The bad-input catalogue's TLS cases: what reaches an HTTPS port that is not a proper TLS client.
/// Each is closed or answered in bounded time, changes nothing, and the server goes on serving others.
@Suite("Bad input over TLS") struct TLSBadInputTests {
    static func configure(_ certificates: TestCertificates) -> (inout LiveBindServer.Configuration) -> Void {
        { configuration in
            configuration.network.tlsCertificateFile = certificates.serverCertificate
            configuration.network.tlsKeyFile = certificates.serverKey
            configuration.network.requestTimeout = .seconds(1)
        }
    }

    @Test func plainHTTPSentToTheTLSPortIsClosedAndChangesNothing() throws {
        try TestCertificates.with { certificates in
            let store = Store()
            try store.put("sensor", ["temperature": 20.5])
            let before = store.lastSequence
            try withRunningServer(store: store, configure: Self.configure(certificates)) { port in
                for request in [
                    "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                    "POST /models/sensor HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 16\r\n\r\ntemperature=99.0"
                ] {
                    let socket = try TestSocket(port: port, timeout: 10)
                    try socket.send(request)
                    let started = ContinuousClock.now
                    let answer = try socket.readToEnd()  // throws if the server leaves it hanging
                    #expect(ContinuousClock.now - started < .seconds(5))
                    // Nothing that looks like an HTTP answer in clear: at most a TLS alert record (type 21).
                    #expect(answer.isEmpty || answer.first == 21, "\(answer)")
                }
                #expect(store.lastSequence == before)
                let health = try TestCurl(certificates: certificates, port: port).request("/healthz")
                #expect(TestCurl.status(health.output) == 200)
            }
        }
    }

    @Test func handshakesThatNeverFinishAreCutAndOthersAreServed() throws {
        try TestCertificates.with { certificates in
            try withRunningServer(configure: Self.configure(certificates)) { port in
                let silent = try TestSocket(port: port, timeout: 10)
                let halfHello = try TestSocket(port: port, timeout: 10)
                // A handshake record header announcing 512 bytes, and only 4 of them.
                try halfHello.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC])
                let started = ContinuousClock.now
                let curl = TestCurl(certificates: certificates, port: port)
                #expect(TestCurl.status(try curl.request("/healthz").output) == 200)
                try silent.waitForClose()
                try halfHello.waitForClose()
                // The request timeout (1 s) cuts them, swept every fraction of it: well before 10 s.
                #expect(ContinuousClock.now - started < .seconds(8))
                #expect(TestCurl.status(try curl.request("/healthz").output) == 200)
            }
        }
    }

    @Test func aClientCertificateItDidNotAskForIsIgnored() throws {
        try TestCertificates.with { certificates in
            let store = Store()
            try store.put("sensor", ["temperature": 20.5])
            try withRunningServer(store: store, configure: Self.configure(certificates)) { port in
                let curl = TestCurl(certificates: certificates, port: port)
                let response = try curl.request(
                    "/models/sensor",
                    [
                        "--cert", certificates.clientCertificate,
                        "--key", certificates.clientKey, "-d", "temperature=30"
                    ])
                #expect(response.status == 0, "\(response.error)")
                #expect(TestCurl.status(response.output) == 200)
                #expect(try store.value(of: "sensor", at: Path(dotted: "temperature")) == 30)
            }
        }
    }
}
