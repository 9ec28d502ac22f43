import Foundation
import Testing
@testable import LiveBind

@Suite("Streams at scale", .serialized) struct StreamScaleTests {
    static let streamCount = 1_000

    @Test func thousandStreamsOpenWhileWritesAndReadsAreAnswered() throws {
        raiseFileLimit(to: 8192)
        let store = Store()
        try store.put("m", ["v": 0])
        try withRunningServer(store: store) { port in
            let streams = try (0..<Self.streamCount).map { _ in try TestEventStream(port: port, target: "/events?model=m", timeout: 30) }
            #expect(streams.allSatisfy { $0.status == 200 })
            for stream in streams { #expect(try stream.next()?.type == "snapshot") }

            let clock = ContinuousClock()
            let started = clock.now
            let write = try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "1")
            #expect(write.status == 200)
            let read = try TestHTTPClient.request(port: port, "GET", "/models/m")
            #expect(read.status == 200)
            let other = try TestHTTPClient.send(port: port, "PUT", "/models/other", #"{"ok":true}"#)
            #expect(other.status == 201)
            #expect(clock.now - started < .seconds(20))

            var received = 0
            for stream in streams {
                let event = try stream.next()
                if event?.type == "set", event?.id == "2" { received += 1 }
            }
            #expect(received == Self.streamCount)
            let metrics = try TestHTTPClient.request(port: port, "GET", "/metrics").text
            #expect(metrics.contains("livebind_open_streams \(Self.streamCount)\n"))
        }
    }

    @Test func stopWithThousandStreamsOpenEndsThemAll() throws {
        raiseFileLimit(to: 8192)
        let store = Store()
        try store.put("m", ["v": 0])
        var configuration = LiveBindServer.Configuration()
        configuration.port = 0
        let server = LiveBindServer(store: store, configuration: configuration)
        try server.start()
        let streams = try (0..<Self.streamCount).map { _ in try TestEventStream(port: server.port, timeout: 30) }
        for stream in streams { _ = try stream.next() }
        try store.set(1, at: Path(pointer: "/v"), in: "m")
        let clock = ContinuousClock()
        let elapsed = clock.measure { server.stop() }
        #expect(elapsed < .seconds(5))
        for stream in streams { try stream.socket.waitForClose() }
    }
}
