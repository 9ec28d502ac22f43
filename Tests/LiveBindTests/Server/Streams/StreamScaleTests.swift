import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine

@Suite("Streams at scale", .serialized) struct StreamScaleTests {
    /// Streams open at once in the big test: client and server share this process, so twice as many sockets.
    static let streamCount = 10_000
    /// Streams open when stopping (the issue's shutdown case).
    static let stopStreamCount = 1_000

    /// The server runs as the real executable in a child process: with client and server in one
    /// process 10,000 streams need over 20,000 descriptors, more than the hard limit of some machines.
    @Test func tenThousandStreamsGetTheirSnapshotAndTheNextEventWhileWritesAndReadsAreAnswered() throws {
        let wanted = Self.streamCount + 2048
        let limit = raiseFileLimit(to: wanted)
        try #require(limit >= wanted, "\(Self.streamCount) streams need \(wanted) open files here; the limit is \(limit) (raise ulimit -n)")
        let clock = ContinuousClock()
        let opening = clock.now
        try withServerProcess(["--no-demo", "--max-streams", "\(Self.streamCount)"]) { port in
            #expect(try TestHTTPClient.send(port: port, "PUT", "/models/m", #"{"v":0}"#).status == 201)
            let streams = try (0..<Self.streamCount).map { _ in try TestEventStream(port: port, target: "/events?model=m", timeout: 30) }
            #expect(streams.allSatisfy { $0.status == 200 })
            for stream in streams { #expect(try stream.next()?.type == "snapshot") }

            let clock = ContinuousClock()
            let started = clock.now
            let write = try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "1")
            #expect(write.status == 200)
            let writeID = try write.object()["id"] as? String
            let read = try TestHTTPClient.request(port: port, "GET", "/models/m")
            #expect(read.status == 200)
            let other = try TestHTTPClient.send(port: port, "PUT", "/models/other", #"{"ok":true}"#)
            #expect(other.status == 201)
            #expect(clock.now - started < .seconds(20))

            var received = 0
            for stream in streams {
                let event = try stream.next()
                if event?.type == "set", event?.id == writeID { received += 1 }
            }
            #expect(received == Self.streamCount)
            let metrics = try TestHTTPClient.request(port: port, "GET", "/metrics").text
            #expect(metrics.contains("livebind_open_streams \(Self.streamCount)\n"))
            print(
                "Streams at scale: \(Self.streamCount) streams got their snapshot and the write's event "
                    + "(\(received) received) in \(clock.now - opening)")
        }
    }

    @Test func stopWithThousandStreamsOpenEndsThemAll() throws {
        raiseFileLimit(to: 8192)
        let store = Store()
        try store.put("m", ["v": 0])
        var configuration = LiveBindServer.Configuration()
        configuration.network.port = 0
        let server = LiveBindServer(store: store, configuration: configuration)
        try server.start()
        let streams = try (0..<Self.stopStreamCount).map { _ in try TestEventStream(port: server.port, timeout: 30) }
        for stream in streams { _ = try stream.next() }
        try store.set(1, at: Path(pointer: "/v"), in: "m")
        let clock = ContinuousClock()
        let elapsed = clock.measure { server.stop() }
        #expect(elapsed < .seconds(5))
        for stream in streams { try stream.socket.waitForClose() }
    }
}
