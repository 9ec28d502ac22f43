import Foundation
import Testing

/// Snapshot floods: many streams connecting to a large model at once, none of them reading.
extension ReliabilityTests.HostileSequenceTests {
    @Suite("Hostile stream floods") struct HostileStreamTests {
        static let streamCount = 2_000
        static let modelBytes = 4 << 20

        /// Issue 13, item 2: 2,000 streams connect at once to a 4 MiB model and never read; then they
        /// leave and 2,000 more do the same. Streams connecting at the same cut share one encoded
        /// snapshot, so the server's RSS stays under 300 MiB (one private copy each would be 8 GB), while a
        /// normal reader gets all 20 writes made meanwhile, in order, and `/healthz` answers throughout,
        /// each time within 5 s.
        /// The watchdog holds the server to the bound while the streams connect: past it, it is killed.
        @Test(.timeLimit(.minutes(5))) func twoThousandNeverReadingStreamsOnAFourMiBModelStayUnderTheBound() throws {
            let bound = MemoryBound(mebibytes: 300)
            let wanted = Self.streamCount + 1_024
            let limit = raiseFileLimit(to: wanted)
            try #require(limit >= wanted, "\(Self.streamCount) streams need \(wanted) open files; the limit is \(limit)")
            let server = try HostileServer(
                ["--body-limit", "\(Self.modelBytes + 65_536)", "--max-streams", "\(Self.streamCount + 16)"],
                bound: bound)
            let row = #""\#(String(repeating: "r", count: 1_022))""#  // 1 KiB with its quotes and comma
            let rows = Array(repeating: row, count: Self.modelBytes / 1_025).joined(separator: ",")
            #expect(try server.send("PUT", "/models/big", #"{"v":0,"rows":[\#(rows)]}"#).status == 201)
            let reader = try TestEventStream(port: server.port, target: "/events?model=big", timeout: 30)
            #expect(try reader.next()?.type == "snapshot")

            var write = 0
            try server.explainingFailures {
                for round in 1...2 {
                    let openedBefore = try server.metrics()["livebind_streams_opened_total", default: 0]
                    var flood = try openStreams(Self.streamCount, port: server.port)
                    var slowest = Duration.zero
                    let opened = try waitUntil(seconds: 120) {
                        try server.requireMemory()
                        let asked = ContinuousClock.now
                        #expect(server.isUp, "round \(round): /healthz did not answer during the flood")
                        slowest = max(slowest, ContinuousClock.now - asked)
                        let metrics = try server.metrics()
                        return metrics["livebind_streams_opened_total", default: 0] >= openedBefore + Self.streamCount
                    }
                    #expect(opened, "round \(round): not all \(Self.streamCount) streams were admitted")
                    #expect(slowest < server.scaled(.seconds(5)), "round \(round): /healthz took \(slowest) during the flood")
                    for _ in 0..<10 {
                        write += 1
                        #expect(try server.send("PUT", "/models/big/v", "\(write)").status == 200)
                        try server.requireMemory()
                    }
                    for expected in (write - 9)...write {
                        let event = try reader.next()
                        let value = try event?.object()["value"] as? Int
                        #expect(
                            event?.type == "set" && value == expected,
                            "round \(round): reader expected set \(expected), got \(event?.description.prefix(200) ?? "the end")")
                    }
                    server.expectPeakMemory()
                    flood.removeAll()  // they leave: the server notices and frees them
                    let left = try waitUntil(seconds: 60) {
                        try server.metrics()["livebind_open_streams", default: -1] == 1
                    }
                    #expect(left, "round \(round): the flood's streams were not all closed")
                }
            }
            #expect(server.isUp)
            let peak = server.expectPeakMemory()
            print(
                "Hostile flood: 2 × \(Self.streamCount) never-reading streams on a \(Self.modelBytes >> 20) MiB model; "
                    + "reader got all \(write) writes; server peak RSS \(peak) MiB")
        }

        /// Opens `count` connections with 4 KiB receive buffers and sends each a `GET /events?model=big`
        /// before reading anything from any of them (they never read).
        private func openStreams(_ count: Int, port: Int) throws -> [TestSocket] {
            let sockets = try (0..<count).map { _ in try TestSocket(port: port, timeout: 30, receiveBufferSize: 4_096) }
            let request = "GET /events?model=big HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n"
            for socket in sockets { try socket.send(request) }
            return sockets
        }
    }
}
