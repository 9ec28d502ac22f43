import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Event streams") struct EventStreamTests {
    @Test func streamStartsWithRetryThenOneSnapshotPerModelAtTheCut() throws {
        let store = Store()
        try store.put("b", ["x": 1])
        try store.put("a", ["y": [1, 2]])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port)
            #expect(stream.status == 200)
            #expect(stream.headers.first { $0.name == "Content-Type" }?.value.hasPrefix("text/event-stream") == true)
            let events = try stream.next(2)
            #expect(stream.retry == 2000)
            #expect(events.map(\.type) == ["snapshot", "snapshot"])
            // One cut, one id, on its last event: a client dropping inside the cut resumes before it.
            #expect(events.map(\.ownID) == [nil, "2"])
            let first = try events[0].object()
            #expect(first["model"] as? String == "a")
            #expect(first["rev"] as? Int == 1)
            #expect((first["value"] as? [String: Any])?["y"] as? [Int] == [1, 2])
        }
    }

    @Test func commitsArriveInOrderWithTheirIdsAndShapes() throws {
        let store = Store()
        try store.put("m", ["items": [], "name": "x"])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port)
            _ = try stream.next(1)
            try store.set("y", at: Path(pointer: "/name"), in: "m")
            try store.append(["id": "o1", "n": 1], to: Path(pointer: "/items"), in: "m")
            try store.replace(at: 0, in: Path(pointer: "/items"), of: "m", with: ["id": "o1", "n": 2])
            try store.remove(at: Path(pointer: "/items/0"), in: "m")
            try store.drop("m")
            let events = try stream.next(5)
            #expect(events.map(\.type) == ["set", "insert", "replace", "remove", "drop"])
            #expect(events.map(\.id) == ["2", "3", "4", "5", "6"])
            let set = try events[0].object()
            #expect(set["path"] as? String == "/name")
            #expect(set["value"] as? String == "y")
            #expect(set["rev"] as? Int == 2)
            let insert = try events[1].object()
            #expect(insert["path"] as? String == "/items")
            #expect(insert["index"] as? Int == 0)
            #expect(insert["key"] as? String == "o1")
            let remove = try events[3].object()
            #expect(remove["index"] as? Int == 0)
            #expect(remove["value"] == nil)
        }
    }

    @Test func severalChangesInOneWriteAreOneBatchEvent() throws {
        let store = Store()
        try store.put("m", ["a": 1, "b": 2])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port)
            _ = try stream.next(1)
            let a = try Path(pointer: "/a"), b = try Path(pointer: "/b")
            try store.write("m") { (editor: inout ModelEditor) throws(StoreError) in
                try editor.set(10, at: a)
                try editor.set(20, at: b)
            }
            let batch = try #require(try stream.next())
            #expect(batch.type == "batch")
            let data = try batch.object()
            let changes = try #require(data["changes"] as? [[String: Any]])
            #expect(changes.map { $0["kind"] as? String } == ["set", "set"])
            #expect(changes.map { $0["path"] as? String } == ["/a", "/b"])
        }
    }

    @Test func modelFilterDeliversOnlyThoseModels() throws {
        let store = Store()
        try store.put("a", [:])
        try store.put("b", [:])
        try store.put("c", [:])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, target: "/events?model=a&model=c")
            let snapshots = try stream.next(2)
            #expect(try snapshots.map { try $0.object()["model"] as? String } == ["a", "c"])
            try store.set(1, at: Path(pointer: "/x"), in: "b")
            try store.set(2, at: Path(pointer: "/x"), in: "c")
            let event = try #require(try stream.next())
            #expect(try event.object()["model"] as? String == "c")
            #expect(event.id == "5")
        }
    }

    @Test func twoStreamsReceiveTheSameCommit() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            let first = try TestEventStream(port: port)
            let second = try TestEventStream(port: port)
            _ = try first.next(1)
            _ = try second.next(1)
            try store.set(5, at: Path(pointer: "/v"), in: "m")
            let one = try #require(try first.next())
            let two = try #require(try second.next())
            #expect(one.data == two.data)
            #expect(one.id == "2" && two.id == "2")
        }
    }

    @Test(arguments: [true, false])
    func resumeDeliversExactlyTheMissedEvents(useHeader: Bool) throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            var stream: TestEventStream? = try TestEventStream(port: port)
            _ = try stream!.next(1)
            for value in 1...3 { try store.set(.int(value), at: Path(pointer: "/v"), in: "m") }
            let seen = try stream!.next(3)
            let lastID = try #require(seen.last?.id)
            stream = nil  // the connection drops
            for value in 4...8 { try store.set(.int(value), at: Path(pointer: "/v"), in: "m") }
            let resumed =
                useHeader
                ? try TestEventStream(port: port, headers: [("Last-Event-ID", lastID)])
                : try TestEventStream(port: port, target: "/events?lastEventId=\(lastID)")
            let missed = try resumed.next(5)
            #expect(missed.map(\.type) == Array(repeating: "set", count: 5))
            #expect(try missed.map { try $0.object()["value"] as? Int } == [4, 5, 6, 7, 8])
            #expect(missed.map(\.id) == ["5", "6", "7", "8", "9"])
            try store.set(9, at: Path(pointer: "/v"), in: "m")
            #expect(try resumed.next()?.id == "10")
        }
    }

    /// While no stream is open the event feed gathers commits before it publishes them (nobody can
    /// see them yet): a client that then resumes from one of them still gets every later one, once,
    /// in order, whether it registers before or after the feed publishes them.
    @Test func resumeAfterWritesNobodyWatchedDeliversEveryLaterOne() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            for value in 1...20 { try store.set(.int(value), at: Path(pointer: "/v"), in: "m") }
            let stream = try TestEventStream(port: port, headers: [("Last-Event-ID", "2")])
            let missed = try stream.next(19)
            #expect(try missed.map { try $0.object()["value"] as? Int } == Array(2...20))
            #expect(missed.map(\.id) == (3...21).map { String($0) })
            try store.set(21, at: Path(pointer: "/v"), in: "m")
            #expect(try stream.next()?.id == "22")
        }
    }

    @Test func resumeFromAnIdNoLongerRetainedGetsResyncGapAndSnapshots() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store, configure: { $0.streams.retainedEvents = 4 }) { port in
            for value in 1...10 { try store.set(.int(value), at: Path(pointer: "/v"), in: "m") }
            // The event feed publishes a moment after the writes; resume once it has.
            try waitForMetric(port: port, "livebind_events_published_total", atLeast: 10)
            let stream = try TestEventStream(port: port, headers: [("Last-Event-ID", "2")])
            let events = try stream.next(2)
            #expect(events[0].type == "resync")
            #expect(try events[0].object()["reason"] as? String == "gap")
            #expect(events[1].type == "snapshot")
            #expect(events[1].id == "11")
            #expect((try events[1].object()["value"] as? [String: Any])?["v"] as? Int == 10)
        }
    }

    /// Found by FuzzHeaders: `UInt64` reads a sign, so `+1` resumed after event 1. Ids are digits.
    @Test func anIdWithASignNamesNoEvent() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try store.set(1, at: Path(pointer: "/v"), in: "m")
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, headers: [("Last-Event-ID", "+1")])
            let events = try stream.next(2)
            #expect(events.map(\.type) == ["resync", "snapshot"])
            #expect(try events[0].object()["reason"] as? String == "gap")
        }
    }

    @Test func resumeFromAnIdNewerThanTheStoreGetsResyncRestart() throws {
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            let stream = try TestEventStream(port: port, headers: [("Last-Event-ID", "999")])
            let events = try stream.next(2)
            #expect(events.map(\.type) == ["resync", "snapshot"])
            #expect(try events[0].object()["reason"] as? String == "restart")
        }
    }

    /// A server without a data directory, restarted: the new run commits more changes than the old one
    /// had, so ids counted from 1 would collide and the client would take the new run's events as the
    /// ones it missed. Ids from the clock keep growing instead, and the client is told to start over.
    @Test func aClientFromBeforeARestartGetsResyncRestartAndIdsKeepGrowing() throws {
        var configuration = LiveBindServer.Configuration()
        configuration.network.host = "127.0.0.1"
        configuration.network.port = 0
        let first = try LiveBindServer(configuration: configuration)
        try first.start()
        try first.store.put("m", ["v": 0])
        let stream = try TestEventStream(port: first.port)
        let oldID = try #require(try stream.next()?.id.flatMap { UInt64($0) })
        first.stop()
        #expect(try stream.next() == nil)  // the stop ended the stream

        let second = try LiveBindServer(configuration: configuration)
        try second.start()
        defer { second.stop() }
        try second.store.put("m", ["v": 0])
        for value in 1...5 { try second.store.set(.int(value), at: Path(pointer: "/v"), in: "m") }
        let resumed = try TestEventStream(port: second.port, headers: [("Last-Event-ID", "\(oldID)")])
        let events = try resumed.next(2)
        #expect(events.map(\.type) == ["resync", "snapshot"])
        #expect(try events[0].object()["reason"] as? String == "restart")
        #expect(try #require(events[1].id.flatMap { UInt64($0) }) > oldID + 5)
        #expect((try events[1].object()["value"] as? [String: Any])?["v"] as? Int == 5)
    }

    @Test func heartbeatCommentsArriveOnIdleStreams() throws {
        try withRunningServer(configure: { $0.streams.heartbeat = .milliseconds(100) }) { port in
            let stream = try TestEventStream(port: port)
            _ = try stream.waitForComments(2)
            #expect(stream.comments.count >= 2)
        }
    }

    @Test func streamsPastTheLimitGet503Problem() throws {
        try withRunningServer(configure: { $0.streams.maxStreams = 2 }) { port in
            let one = try TestEventStream(port: port)
            let two = try TestEventStream(port: port)
            let three = try TestEventStream(port: port)
            #expect(one.status == 200 && two.status == 200)
            #expect(three.status == 503)
            let problem = try TestHTTPResponse(status: 503, headers: three.headers, body: three.errorBody).object()
            #expect(problem["status"] as? Int == 503)
            #expect(three.headers.contains { $0.name == "Content-Type" && $0.value == "application/problem+json" })
            let health = try TestHTTPClient.request(port: port, "GET", "/healthz")
            #expect(health.status == 200)
        }
    }

    @Test func aClientThatFallsBehindTheLogGetsResyncLagging() throws {
        let store = Store()
        try store.put("m", ["v": ""])
        try withRunningServer(store: store, configure: { $0.streams.retainedEvents = 16 }) { port in
            let stream = try TestEventStream(port: port)
            _ = try stream.next(1)
            let first = try #require(try stream.fallBehind(writingTo: "m", in: store))
            #expect(first.type == "snapshot")
        }
    }

    @Test func stopEndsOpenStreams() throws {
        let store = Store()
        let server = LiveBindServer(
            store: store,
            configuration: {
                var configuration = LiveBindServer.Configuration()
                configuration.network.port = 0
                return configuration
            }())
        try server.start()
        let streams = try (0..<20).map { _ in try TestEventStream(port: server.port) }
        let clock = ContinuousClock()
        let elapsed = clock.measure { server.stop() }
        #expect(elapsed < .seconds(3))
        for stream in streams { try stream.socket.waitForClose() }
    }
}
