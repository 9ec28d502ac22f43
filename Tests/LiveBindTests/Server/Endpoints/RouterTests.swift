import Testing
import LiveBind
@testable import LiveBindEngine

@Suite("Router") struct RouterTests {
    /// Found by schemathesis (`make test-contract`): `DELETE /models/%E0%BE%80/…` got 405, because the
    /// path was split into Characters and U+0F80, a combining mark, joined the `/` before it into one.
    @Test func aSegmentStartingWithACombiningMarkIsStillASegment() throws {
        try withRunningServer { port in
            let json = [("Content-Type", "application/json")]
            let put = try TestHTTPClient.request(
                port: port, "PUT", "/models/marks", headers: json,
                text: #"{"\#u{0F80}x": 1}"#)
            #expect(put.status == 201)
            let read = try TestHTTPClient.request(port: port, "GET", "/models/marks/%E0%BE%80x")
            #expect(read.status == 200)
            #expect(read.text == "1")
            let removed = try TestHTTPClient.request(port: port, "DELETE", "/models/marks/%E0%BE%80x")
            #expect(removed.status == 200)
            #expect(try TestHTTPClient.request(port: port, "GET", "/models/marks").text == "{}")

            let badName = try TestHTTPClient.request(port: port, "DELETE", "/models/%E0%BE%80/x")
            #expect(badName.status == 404, "no model has that name: routed to the models, not a 405")
            #expect(badName.header("Content-Type") == "application/problem+json")
        }
    }
}
