import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

extension ReliabilityTests {
    @Suite("Clients that never read") struct StalledClientTests {
        static let stalledCount = 40
        static let eventCount = 3000
        static let eventSize = 16 * 1024
        static let retained = 256

        @Test func stalledStreamsAreDroppedWhileAReaderGetsEveryEventInOrderAndMemoryStaysBounded() throws {
            raiseFileLimit(to: 4096)
            let store = Store()
            try store.put("m", ["v": ""])
            try withRunningServer(
                store: store,
                configure: {
                    $0.streams.retainedEvents = Self.retained
                    $0.streams.heartbeat = .milliseconds(500)
                    $0.network.connectionTimeout = 1  // raised to two heartbeats + 5 s: 7 s without progress
                }
            ) { port in
                // Tiny receive windows: a few kilobytes of events fill each stalled socket.
                let stalled = try (0..<Self.stalledCount).map { _ in
                    try TestEventStream(port: port, target: "/events", timeout: 30, receiveBufferSize: 2048)
                }
                #expect(stalled.allSatisfy { $0.status == 200 })
                let reader = ThreadBox(try TestEventStream(port: port, target: "/events?model=m", timeout: 30))
                let firstID = try #require(try reader.value.next()).id.flatMap { UInt64($0) }
                let received = SharedCount()
                let readerThread = TestThread {
                    var expected = try #require(firstID) + 1
                    while received.value < Self.eventCount {
                        guard let event = try reader.value.next() else { throw TestSocketError(description: "reader's stream ended") }
                        guard event.type == "set", event.id == "\(expected)" else {
                            throw TestSocketError(description: "reader expected set #\(expected), got \(event.type)#\(event.id ?? "-")")
                        }
                        let value = try event.object()["value"] as? String ?? ""
                        let index = received.value
                        guard value.hasPrefix("\(index):") else { throw TestSocketError(description: "event \(index) out of order") }
                        expected += 1
                        received.add()
                    }
                }

                let rssBefore = residentKilobytes()
                let filler = String(repeating: "x", count: Self.eventSize)
                for index in 0..<Self.eventCount {
                    try store.set(.string("\(index):\(filler)"), at: Path(pointer: "/v"), in: "m")
                    // Keep the one reader within the retained window: it must see every event.
                    if index % 32 == 31 {
                        let caughtUp = waitUntil(seconds: 30) { received.value >= index + 1 - Self.retained / 2 }
                        try #require(caughtUp, "reader stuck at \(received.value) of \(index + 1)")
                    }
                }
                try readerThread.join(seconds: 60)
                let rssGrowthMB = (residentKilobytes() - rssBefore) / 1024
                let flowedMB = Self.eventCount * Self.eventSize / (1 << 20)

                var metrics = try readMetrics(port: port)
                // Every stream shares one bounded log: at most `retained` events of ~16 kB.
                #expect(metrics["livebind_retained_events", default: -1] <= Self.retained)
                #expect(metrics["livebind_retained_bytes", default: -1] <= Self.retained * (Self.eventSize + 256))
                // Had each stalled stream queued its own copy, that would be stalled × flowed.
                #expect(rssGrowthMB < 1024, "RSS grew \(rssGrowthMB) MB")

                let dropped = try waitUntil(seconds: 40) {
                    metrics = try readMetrics(port: port)
                    return metrics["livebind_stalled_streams_closed_total", default: 0] >= Self.stalledCount
                        && metrics["livebind_open_streams", default: -1] == 1
                }
                #expect(dropped, "stalled streams not all dropped: \(metrics)")
                #expect(metrics["livebind_dropped_clients_total", default: 0] >= Self.stalledCount)
                #expect(stalled.allSatisfy { peerClosed($0.socket, seconds: 10) })
                // The reader is still served.
                try store.set("after", at: Path(pointer: "/v"), in: "m")
                #expect(try reader.value.next()?.data.contains(#""after""#) == true)
                print(
                    "Stalled clients: \(Self.stalledCount) never-reading streams dropped, \(received.value) events "
                        + "(\(flowedMB) MB) delivered in order to the reader, RSS growth \(rssGrowthMB) MB, "
                        + "retained \(metrics["livebind_retained_bytes", default: 0] / 1024) kB")
            }
        }

        @Test func aClientThatPausesPastTheRetainedEventsGetsResyncLaggingAndEndsEqualToTheServer() throws {
            let store = Store()
            try store.put("m", ["n": 0, "pad": ""])
            try withRunningServer(store: store, configure: { $0.streams.retainedEvents = 32 }) { port in
                let stream = try TestEventStream(port: port, target: "/events?model=m", timeout: 30, receiveBufferSize: 2048)
                var document = try #require(try stream.next()).object()["value"] as? [String: Any] ?? [:]
                let pad = String(repeating: "p", count: 4096)
                try store.set(.string(pad), at: Path(pointer: "/pad"), in: "m")
                for value in 1...2000 { try store.set(.int(value), at: Path(pointer: "/n"), in: "m") }
                var resyncs = 0
                for _ in 0..<2100 {
                    guard let event = try stream.next() else { break }
                    let data = try event.object()
                    switch event.type {
                    case "resync":
                        #expect(data["reason"] as? String == "lagging")
                        resyncs += 1
                    case "snapshot": document = data["value"] as? [String: Any] ?? [:]
                    case "set":
                        let key = String((data["path"] as? String ?? "/").dropFirst())
                        document[key] = data["value"]
                    default: Issue.record("unexpected \(event)")
                    }
                    if document["n"] as? Int == 2000 { break }
                }
                #expect(resyncs >= 1)
                let server = try TestHTTPClient.getObject(port: port, "/models/m")
                #expect(NSDictionary(dictionary: document).isEqual(to: server))
            }
        }
    }
}
