import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// Write rate limits: per client (bearer token, or address), 429 with `Retry-After`, counted in
/// `/metrics`; reads and streams go on; the table of clients stays bounded.
@Suite("Write rate limits") struct WriteRateLimitTests {
    @Test func aBurstThenTheRateThenRetryAfter() {
        let limiter = WriteRateLimiter(rate: 2, burst: 3, maxClients: 100)
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(limiter.take(for: "a", at: start) == nil) }
        #expect(limiter.take(for: "a", at: start) == 1)
        // Another client has a bucket of its own.
        #expect(limiter.take(for: "b", at: start) == nil)
        // Half a second later, one write (2 a second) is back, and only one.
        #expect(limiter.take(for: "a", at: start + .milliseconds(500)) == nil)
        #expect(limiter.take(for: "a", at: start + .milliseconds(500)) != nil)
        // Long after, the burst is back, never more.
        let later = start + .seconds(60)
        for _ in 0..<3 { #expect(limiter.take(for: "a", at: later) == nil) }
        #expect(limiter.take(for: "a", at: later) != nil)
        // A slow rate says how long to wait.
        let slow = WriteRateLimiter(rate: 0.1, burst: 1, maxClients: 10)
        #expect(slow.take(for: "a", at: start) == nil)
        #expect(slow.take(for: "a", at: start) == 10)
    }

    @Test func theTableOfClientsStaysBounded() {
        let limiter = WriteRateLimiter(rate: 1, burst: 1, maxClients: 8)
        let start = ContinuousClock.now
        for client in 0..<1_000 {
            // Every client leaves a debt behind, so none can be forgotten for being refilled.
            _ = limiter.take(for: "client-\(client)", at: start + .milliseconds(client))
            _ = limiter.take(for: "client-\(client)", at: start + .milliseconds(client))
            #expect(limiter.trackedClients <= 8)
        }
        // A client forgotten starts over with its burst; one still tracked is still limited.
        #expect(limiter.take(for: "client-0", at: start + .milliseconds(1_000)) == nil)
        #expect(limiter.take(for: "client-999", at: start + .milliseconds(1_000)) != nil)
    }

    /// Found by review: a rate the settings take (0 to 1,000,000) but so small that the wait did not fit
    /// an Int trapped on the second write (`--write-rate 1e-300`).
    @Test func aTinyRateWaitsADayNotForever() throws {
        try withRunningServer(configure: { $0.limits.writeRate = 1e-300 }) { port in
            func write() throws -> TestHTTPResponse {
                try TestHTTPClient.request(port: port, "PUT", "/models/m", headers: [("Content-Type", "application/json")], text: "{}")
            }
            #expect(try write().status == 201)
            let refused = try write()
            #expect(refused.status == 429 && refused.header("Retry-After") == "86400", "\(refused.status) \(refused.text)")
            #expect(try TestHTTPClient.request(port: port, "GET", "/healthz").status == 200)
        }
    }

    @Test func overHTTPWritesPastTheRateGet429WhileReadsAndStreamsGoOn() throws {
        let store = Store()
        try store.put("m", ["n": 0])
        try withRunningServer(
            store: store,
            configure: {
                $0.limits.writeRate = 0.5; $0.limits.writeBurst = 2
            }
        ) { port in
            func write(_ value: Int) throws -> TestHTTPResponse {
                try TestHTTPClient.request(
                    port: port, "PUT", "/models/m/n",
                    headers: [("Content-Type", "application/json")], text: "\(value)")
            }
            #expect(try write(1).status == 200)
            #expect(try write(2).status == 200)
            let refused = try write(3)
            #expect(refused.status == 429)
            #expect(refused.header("Content-Type") == "application/problem+json")
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("--write-rate"))
            #expect(try store.value(of: "m") == ["n": 2])
            // Reads and streams are not limited.
            for _ in 0..<5 { #expect(try TestHTTPClient.request(port: port, "GET", "/models/m").status == 200) }
            let stream = try TestSocket(port: port, timeout: 10)
            try stream.send("GET /events?model=m HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            #expect(try stream.readLine().hasPrefix("HTTP/1.1 200"))
            let metrics = String(decoding: try TestHTTPClient.request(port: port, "GET", "/metrics").body, as: UTF8.self)
            #expect(metrics.contains("livebind_writes_rate_limited_total 1"))
        }
    }

    @Test func eachTokenHasItsOwnRate() throws {
        let store = Store()
        try store.put("lab-1", ["n": 0])
        try withRunningServer(
            store: store,
            configure: { (configuration: inout LiveBindServer.Configuration) in
                configuration.access.policy = TestTokens.policy
                configuration.limits.writeRate = 0.5
                configuration.limits.writeBurst = 1
            }
        ) { (port: Int) throws in
            func write(_ token: String) throws -> Int {
                try TestHTTPClient.request(
                    port: port, "PUT", "/models/lab-1/n",
                    headers: [("Content-Type", "application/json")] + TestTokens.bearer(token),
                    text: "1"
                ).status
            }
            #expect(try write(TestTokens.lab) == 200)
            #expect(try write(TestTokens.lab) == 429)
            #expect(try write(TestTokens.admin) == 200)
            // Made-up tokens share their address's bucket: the first is refused as unknown (401), the
            // next by the rate, so that inventing tokens buys no fresh writes.
            #expect(try write("made-up-1") == 401)
            #expect(try write("made-up-2") == 429)
        }
    }
}
