import Foundation
import Logging
import Synchronization
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

/// The retained event log is bounded in bytes (`--retained-bytes`) as well as in events.
@Suite("Retained bytes") struct RetainedBytesTests {
    /// The `index`th value written: all the same length (and so all the same frame size), all different.
    static func value(_ index: Int) -> String { "\(index % 10)" + String(repeating: "r", count: 999) }

    /// A store with model `m`, as every test here starts.
    static func makeStore() throws -> Store {
        let store = Store()
        try store.put("m", ["v": ""])
        return store
    }

    /// The sizes of the frames the server publishes for the writes of `value(1)`…`value(count)` to a store made by
    /// `makeStore`: the same writes on a twin store, encoded as the server encodes them.
    static func frameSizes(writes count: Int) throws -> [Int] {
        let twin = try makeStore()
        let sizes = OrderedMutex<[Int]>([])
        let token = twin.observeAll { commit in
            let size = EventEncoder.frame(for: commit).bytes.count
            sizes.withLock { $0.append(size) }
        }
        defer { token.cancel() }
        for index in 1...count { try twin.set(.string(value(index)), at: Path(pointer: "/v"), in: "m") }
        return sizes.withLock { $0 }
    }

    /// The event types and ids a stream resuming after `lastEventID` starts with.
    static func resume(port: Int, after lastEventID: UInt64, count: Int) throws -> [String] {
        let stream = try TestEventStream(port: port, target: "/events?model=m", headers: [("Last-Event-ID", "\(lastEventID)")])
        return try stream.next(count).map { "\($0.type)#\($0.id ?? "-")" }
    }

    @Test(arguments: [0, -1])
    func eventsAreKeptUpToExactlyTheRetainedBytesAndTheOldestGoesOneBytePast(slack: Int) throws {
        let sizes = try Self.frameSizes(writes: 4)
        let limit = sizes[0] + sizes[1] + sizes[2] + slack
        let store = try Self.makeStore()
        let start = store.lastSequence
        try withRunningServer(store: store, configure: { $0.streams.retainedBytes = limit }) { port in
            for index in 1...3 { try store.set(.string(Self.value(index)), at: Path(pointer: "/v"), in: "m") }
            var metrics = try waitForMetric(port: port, "livebind_events_published_total", atLeast: 3)
            if slack == 0 {
                // Three events fill the limit exactly: all kept, and a resume from before them is exact.
                #expect(metrics["livebind_retained_events"] == 3)
                #expect(metrics["livebind_retained_bytes"] == limit)
                #expect(try Self.resume(port: port, after: start, count: 3) == (1...3).map { "set#\(start + UInt64($0))" })
            } else {
                // One byte short of three events: the oldest is dropped, and a resume from before it
                // gets resync and snapshots, not a silent gap.
                #expect(metrics["livebind_retained_events"] == 2)
                #expect(metrics["livebind_retained_bytes"] == sizes[1] + sizes[2])
                #expect(try Self.resume(port: port, after: start, count: 2) == ["resync#-", "snapshot#\(start + 3)"])
                #expect(try Self.resume(port: port, after: start + 1, count: 2) == ["set#\(start + 2)", "set#\(start + 3)"])
            }
            // A fourth event always pushes the first out.
            try store.set(.string(Self.value(4)), at: Path(pointer: "/v"), in: "m")
            metrics = try waitForMetric(port: port, "livebind_events_published_total", atLeast: 4)
            #expect(metrics["livebind_retained_bytes", default: .max] <= limit)
            #expect(try Self.resume(port: port, after: start, count: 1) == ["resync#-"])
            #expect(try Self.resume(port: port, after: start + 2, count: 2) == ["set#\(start + 3)", "set#\(start + 4)"])
        }
    }

    @Test func anEventLargerThanTheLimitIsStillKeptAsTheNewest() throws {
        let store = try Self.makeStore()
        let start = store.lastSequence
        try withRunningServer(store: store, configure: { $0.streams.retainedBytes = 1 }) { port in
            for index in 1...3 { try store.set(.string(Self.value(index)), at: Path(pointer: "/v"), in: "m") }
            let metrics = try waitForMetric(port: port, "livebind_events_published_total", atLeast: 3)
            #expect(metrics["livebind_retained_events"] == 1)
            #expect(try Self.resume(port: port, after: start + 2, count: 1) == ["set#\(start + 3)"])
        }
    }

    /// With a data directory the log is seeded from disk at start, and trimmed to the byte limit too.
    @Test func theLogSeededFromTheDataDirectoryIsTrimmedToTheRetainedBytes() throws {
        try withTemporaryDirectory { directory in
            var setSize = 0
            try Self.withDataServer(directory, retainedBytes: 64 << 20) { port in
                let stream = try TestEventStream(port: port, target: "/events?model=m")
                #expect(try TestHTTPClient.send(port: port, "PUT", "/models/m", #"{"v":""}"#).status == 201)
                for index in 1...4 {
                    #expect(try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "\"\(Self.value(index))\"").status == 200)
                }
                let events = try stream.next(5)
                #expect(events.map(\.id) == ["1", "2", "3", "4", "5"])
                setSize = "id: 5\nevent: set\ndata: \(events[4].data)\n\n".utf8.count
            }
            try Self.withDataServer(directory, retainedBytes: 2 * setSize) { port in
                let metrics = try readMetrics(port: port)
                #expect(metrics["livebind_retained_events"] == 2)
                #expect(metrics["livebind_retained_bytes"] == 2 * setSize)
                #expect(try Self.resume(port: port, after: 3, count: 2) == ["set#4", "set#5"])
                #expect(try Self.resume(port: port, after: 2, count: 1) == ["resync#-"])
            }
        }
    }

    /// A server on `directory` keeping `retainedBytes` of events, run for `body` and stopped.
    static func withDataServer(_ directory: String, retainedBytes: Int, _ body: (Int) throws -> Void) throws {
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        configuration.persistence.dataDirectory = directory
        configuration.streams.retainedBytes = retainedBytes
        var logger = Logger(label: "livebind.test")
        logger.logLevel = .warning
        // `stop()` closes the directory: the next server can open it as soon as it returns.
        let server = try LiveBindServer(configuration: configuration, logger: logger)
        try server.start()
        defer { server.stop() }
        try body(server.port)
    }
}
