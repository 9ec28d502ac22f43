import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// `--max-unsent-bytes` bounds every frame streams hold unsent, their own window events included.
@Suite("Unsent-bytes budget") struct UnsentBudgetTests {
    static let budget = 4 << 20
    static let rowBytes = 900 << 10  // under --stream-buffer-limit (1 MiB): no stream is fat on its own

    static func unsentBytes(port: Int) throws -> Int {
        let metrics = try TestHTTPClient.request(port: port, "GET", "/metrics").text
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("livebind_stream_unsent_bytes ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// Each write to a row inside a window is an event of each window stream's own. 40 streams that read
    /// nothing held 36 MiB after one 900 KiB row, none of them past `--stream-buffer-limit` (1,000 streams
    /// and 1 MB rows took a server to 1.9 GB); now the streams past the budget start over instead (or end,
    /// when the budget is still spent as they start over), and a client that reads one of them after the
    /// writes, reconnecting as EventSource does, ends up with the row as it is.
    @Test func windowEventsOfStreamsThatReadNothingStayWithinTheBudget() throws {
        let store = Store()
        try store.put("big", ["arr": [0, 1, 2]])
        try withRunningServer(
            store: store,
            configure: {
                $0.streams.maxUnsentBytes = Self.budget
                $0.streams.heartbeat = .seconds(60)  // no heartbeat tick cuts anything during the test
                $0.limits.bodyLimit = 2 << 20
            }
        ) { port in
            var streams: [TestEventStream] = []
            for _ in 0..<40 {
                let stream = try TestEventStream(port: port, target: "/events?sub=big/arr%3Bfirst=1", receiveBufferSize: 4096)
                #expect(stream.status == 200)
                _ = try stream.next(2)  // `stream` and the window's snapshot; then it reads nothing
                streams.append(stream)
            }
            for letter in ["a", "b", "c"] {
                let row = "\"" + String(repeating: letter, count: Self.rowBytes) + "\""
                let answer = try TestHTTPClient.request(
                    port: port, "PUT", "/models/big/arr/0",
                    headers: [("Content-Type", "application/json")], text: row)
                #expect(answer.status == 200)
                let unsent = try Self.unsentBytes(port: port)
                #expect(unsent <= Self.budget + Self.rowBytes + 4096, "after row \(letter) streams hold \(unsent) bytes unsent")
            }

            // The others go away; a client that reads, reconnecting with Last-Event-ID when its stream
            // ends as EventSource does, ends up with the row as it is.
            let readers = [streams.removeFirst(), streams.removeLast()]
            streams.removeAll()
            let last = String(repeating: "c", count: 16)
            for var stream in readers {
                var sawLast = false
                for _ in 0..<50 where !sawLast {
                    if let event = try stream.next() {
                        sawLast = event.data.contains(last)
                        continue
                    }
                    Thread.sleep(forTimeInterval: 0.1)
                    stream = try TestEventStream(
                        port: port, target: "/events?sub=big/arr%3Bfirst=1",
                        headers: stream.lastEventID.map { [("Last-Event-ID", $0)] } ?? [])
                }
                #expect(sawLast, "a reading client ends with the row as it is")
            }
        }
    }
}
