import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

extension ReliabilityTests {
    @Suite("Stream buffer limit") struct StreamBufferLimitTests {
        /// The bytes of the snapshot frame a stream of `model` alone starts with, encoded as the server does.
        static func snapshotFrameSize(_ store: Store, _ model: String) throws -> Int {
            var bytes: [UInt8] = []
            EventEncoder.appendSnapshot(try store.snapshot(model), sequence: store.lastSequence, into: &bytes)
            return bytes.count
        }

        /// Two clients that never read, each stuck on its snapshot: the one holding exactly
        /// `--stream-buffer-limit` bytes stays, the one holding one byte more is cut and counted,
        /// and a reader of the same model is served throughout.
        @Test func aStreamHoldingOneBytePastTheLimitIsCutWhileOneAtTheLimitAndAReaderStay() throws {
            let store = Store()
            let text = String(repeating: "a", count: 512 * 1024)  // far more than both sockets' buffers
            try store.put("held", ["v": .string(text)])
            try store.put("over", ["v": .string(text + "b")])
            let limit = try Self.snapshotFrameSize(store, "held")
            #expect(try Self.snapshotFrameSize(store, "over") == limit + 1)
            try withRunningServer(
                store: store,
                configure: {
                    $0.streams.streamBufferLimit = limit
                    $0.streams.heartbeat = .milliseconds(200)
                }
            ) { port in
                let atLimit = try TestEventStream(port: port, target: "/events?model=held", receiveBufferSize: 2048)
                let pastLimit = try TestEventStream(port: port, target: "/events?model=over", receiveBufferSize: 2048)
                let reader = try TestEventStream(port: port, target: "/events?model=held")
                #expect(try reader.next()?.type == "snapshot")

                var metrics: [String: Int] = [:]
                let cut = try waitUntil(seconds: 20) {
                    metrics = try readMetrics(port: port)
                    return metrics["livebind_buffer_limit_streams_closed_total", default: 0] >= 1
                        && metrics["livebind_open_streams", default: -1] == 2
                }
                #expect(cut, "the stream past the limit was not cut: \(metrics)")
                #expect(peerClosed(pastLimit.socket, seconds: 10))
                // Several heartbeat intervals later (the idle reader gets one each), the stream at the
                // limit is still open and nothing else was cut.
                let heartbeats = metrics["livebind_heartbeats_total", default: 0]
                let waited = try waitUntil(seconds: 20) {
                    metrics = try readMetrics(port: port)
                    return metrics["livebind_heartbeats_total", default: 0] >= heartbeats + 4
                }
                #expect(waited)
                #expect(metrics["livebind_buffer_limit_streams_closed_total"] == 1)
                #expect(metrics["livebind_open_streams"] == 2)
                #expect(metrics["livebind_dropped_clients_total", default: 0] >= 1)
                #expect(!peerClosed(atLimit.socket, seconds: 0))

                try store.set("next", at: Path(pointer: "/v"), in: "held")
                let event = try #require(try reader.next())
                #expect(event.type == "set")
                #expect(try event.object()["value"] as? String == "next")
            }
        }
    }
}
