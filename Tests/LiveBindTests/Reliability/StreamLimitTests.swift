import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

extension ReliabilityTests {
    @Suite("The stream limit") struct StreamLimitTests {
        static let limit = 50

        /// At `--max-streams`, more `GET /events` get 503 problem+json with `Retry-After`, while writes
        /// and reads are answered and the open streams keep receiving; a closed stream frees its slot.
        @Test func streamsPastTheLimitGet503WhileWritesAndReadsAreServed() throws {
            let store = Store()
            try store.put("m", ["v": 0])
            try withRunningServer(store: store, configure: { $0.streams.maxStreams = Self.limit }) { port in
                var streams = try (0..<Self.limit).map { _ in try TestEventStream(port: port, target: "/events?model=m") }
                #expect(streams.allSatisfy { $0.status == 200 })
                for stream in streams { #expect(try stream.next()?.type == "snapshot") }

                var refused = 0
                for round in 1...20 {
                    let extra = try TestEventStream(port: port, target: "/events?model=m")
                    let problem = TestHTTPResponse(status: extra.status, headers: extra.headers, body: extra.errorBody)
                    #expect(problem.isProblem(503), "\(problem.status) \(problem.text)")
                    #expect(problem.header("Retry-After") != nil)
                    if problem.status == 503 { refused += 1 }
                    let write = try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "\(round)")
                    #expect(write.status == 200)
                    let created = try TestHTTPClient.send(port: port, "PUT", "/models/other\(round)", #"{"round":\#(round)}"#)
                    #expect(created.status == 201)
                    let read = try TestHTTPClient.request(port: port, "GET", "/models/m/v")
                    #expect(read.text == "\(round)")
                }
                for stream in streams {
                    let values = try stream.next(20).compactMap { try $0.object()["value"] as? Int }
                    #expect(values == Array(1...20))
                }
                let metrics = try readMetrics(port: port)
                #expect(metrics["livebind_streams_rejected_total"] == refused)
                #expect(metrics["livebind_open_streams"] == Self.limit)

                // A client that leaves frees its slot; the server notices when it next writes to it.
                streams.removeLast()
                var value = 100
                let admitted = try waitUntil(seconds: 10) {
                    value += 1
                    return try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "\(value)").status == 200
                        && TestEventStream(port: port, target: "/events?model=m").status == 200
                }
                #expect(admitted)
                print("Stream limit: \(Self.limit) streams open, \(refused) refused with 503, 60 writes and reads answered meanwhile")
            }
        }
    }
}
