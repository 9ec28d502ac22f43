import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Parallel clients") struct ParallelClientTests {
    @Test func concurrentHTTPWritersAreStreamedInOrderExactlyOnceToEveryStream() throws {
        let store = Store()
        try store.put("m", ["a": 0, "b": 0, "c": 0, "d": 0])
        let writers = ["a", "b", "c", "d"], writesEach = 40
        try withRunningServer(store: store) { port in
            let streams = try (0..<3).map { _ in try TestEventStream(port: port, timeout: 30) }
            for stream in streams { _ = try stream.next(1) }
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: writers.count) { writer in
                for value in 1...writesEach {
                    let response = try? TestHTTPClient.send(port: port, "PUT", "/models/m/\(writers[writer])", "\(value)")
                    if response?.status != 200 { failures.add(1, ordering: .relaxed) }
                }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
            let total = writers.count * writesEach
            for stream in streams {
                let events = try stream.next(total)
                let ids = events.compactMap { $0.id.flatMap { UInt64($0) } }
                #expect(ids == Array(2...UInt64(total + 1)))
                var last: [String: Int] = [:]
                for event in events {
                    let data = try event.object()
                    let field = String((data["path"] as? String ?? "").dropFirst())
                    let value = data["value"] as? Int ?? -1
                    #expect(value == (last[field] ?? 0) + 1, "per-writer order on \(field)")
                    last[field] = value
                }
            }
            #expect(
                try store.value(of: "m") == ["a": .int(writesEach), "b": .int(writesEach), "c": .int(writesEach), "d": .int(writesEach)])
        }
    }

    @Test func streamsOpenAndCloseWhileWritesPublish() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            let done = Atomic<Bool>(false)
            let writer = Thread {
                var value = 0
                while !done.load(ordering: .relaxed) {
                    value += 1
                    _ = try? store.set(.int(value), at: Path(pointer: "/v"), in: "m")
                    usleep(200)
                }
            }
            writer.start()
            defer { done.store(true, ordering: .relaxed) }
            for round in 0..<30 {
                let stream = try TestEventStream(port: port, timeout: 30)
                let snapshot = try #require(try stream.next())
                #expect(snapshot.type == "snapshot", "round \(round)")
                let next = try #require(try stream.next())
                #expect(UInt64(next.id ?? "") ?? 0 > UInt64(snapshot.id ?? "") ?? 0)
            }
            let metrics = try TestHTTPClient.request(port: port, "GET", "/metrics").text
            #expect(metrics.contains("livebind_streams_opened_total 30\n"))
        }
    }
}
