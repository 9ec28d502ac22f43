import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Heartbeats") struct HeartbeatTests {
    @Test func idleStreamsGetHeartbeatsWhateverTheirFilter() throws {
        let store = Store()
        try store.put("a", ["v": 0])
        try withRunningServer(store: store, configure: { $0.streams.heartbeat = .milliseconds(100) }) { port in
            let everything = try TestEventStream(port: port)
            let oneModel = try TestEventStream(port: port, target: "/events?model=a")
            _ = try everything.waitForComments(3)
            _ = try oneModel.waitForComments(3)
            #expect(everything.comments.allSatisfy { $0.trimmingCharacters(in: .whitespaces) == "heartbeat" })
            #expect(oneModel.comments.count >= 3)
        }
    }

    @Test func aBusyStreamGetsEveryEventInOrderWhileAnIdleOneGetsHeartbeats() throws {
        let store = Store()
        try store.put("busy", ["v": 0])
        try store.put("idle", ["v": 0])
        try withRunningServer(store: store, configure: { $0.streams.heartbeat = .milliseconds(100) }) { port in
            let busy = try TestEventStream(port: port, target: "/events?model=busy")
            let idle = try TestEventStream(port: port, target: "/events?model=idle")
            _ = try busy.next(1)
            _ = try idle.next(1)
            let count = 300
            for value in 1...count {
                try store.set(.int(value), at: Path(pointer: "/v"), in: "busy")
                usleep(2_000)
            }
            var values: [Int] = []
            while values.count < count {
                let event = try #require(try busy.next())
                values.append(try #require(try event.object()["value"] as? Int))
            }
            #expect(values == Array(1...count))
            let idleEvents = try idle.waitForComments(3)
            #expect(idleEvents.isEmpty)  // nothing of the busy model reached the idle stream
        }
    }

    @Test func aClientThatWentAwayIsClosedByTheHeartbeats() throws {
        try withRunningServer(configure: { $0.streams.heartbeat = .milliseconds(100) }) { port in
            var stream: TestEventStream? = try TestEventStream(port: port)
            _ = try stream?.waitForComments(1)
            #expect(try readMetrics(port: port)["livebind_open_streams"] == 1)
            stream = nil  // closes the socket without a word to the server
            let closed = try waitUntil(seconds: 20) { try readMetrics(port: port)["livebind_open_streams"] == 0 }
            #expect(closed)
        }
    }

    @Test func heartbeatsDoNotPushEventsOutOfTheRetainedLog() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(
            store: store,
            configure: {
                $0.streams.heartbeat = .milliseconds(50)
                $0.streams.retainedEvents = 4
            }
        ) { port in
            let first = try TestEventStream(port: port)
            _ = try first.next(1)
            try store.set(.int(1), at: Path(pointer: "/v"), in: "m")
            let set = try #require(try first.next())
            let id = try #require(set.id.flatMap { UInt64($0) })
            _ = try first.waitForComments(10)  // many more heartbeats than retained events
            let resumed = try TestEventStream(port: port, headers: [("Last-Event-ID", "\(id - 1)")])
            let event = try #require(try resumed.next())
            #expect(event.type == "set")
            #expect(event.id == "\(id)")
        }
    }

    /// Heartbeats go straight to idle sockets while commits wake the same streams in between: every
    /// stream must stay correctly chunked and get every event, in order.
    @Test func heartbeatsBetweenEventsKeepEveryStreamWholeAndInOrder() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store, configure: { $0.streams.heartbeat = .milliseconds(20) }) { port in
            let streams = try (0..<8).map { _ in try TestEventStream(port: port, target: "/events?model=m") }
            for stream in streams { #expect(try stream.next()?.type == "snapshot") }
            let count = 40
            for value in 1...count {
                try store.set(.int(value), at: Path(pointer: "/v"), in: "m")
                usleep(UInt32(5_000 + value % 7 * 10_000))  // 5–65 ms: some gaps span heartbeats, some not
            }
            for stream in streams {
                let values = try stream.next(count).map { try #require(try $0.object()["value"] as? Int) }
                #expect(values == Array(1...count))
                #expect(stream.comments.count >= 5)
            }
            // The heartbeats went straight to the parked sockets, not through a wake-up each.
            let metrics = try readMetrics(port: port)
            #expect(try #require(metrics["livebind_heartbeats_direct_total"]) >= 8 * 5)
        }
    }

    @Test func anHTTP10StreamGetsUnchunkedHeartbeats() throws {
        try withRunningServer(configure: { $0.streams.heartbeat = .milliseconds(50) }) { port in
            let socket = try TestSocket(port: port)
            try socket.send("GET /events HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n")
            let (status, _) = try TestHTTPClient.readHead(from: socket)
            #expect(status == 200)
            var heartbeats = 0
            for _ in 0..<50 where heartbeats < 3 {
                let line = try socket.readLine()
                // Every line is an SSE field, a comment or a blank: no chunk sizes, no chunk ends.
                if !line.isEmpty { #expect(line.contains(":"), "not an SSE line: \(line)") }
                if line == ": heartbeat" { heartbeats += 1 }
            }
            #expect(heartbeats == 3)
            #expect(try #require(try readMetrics(port: port)["livebind_heartbeats_direct_total"]) >= 3)
        }
    }
}
