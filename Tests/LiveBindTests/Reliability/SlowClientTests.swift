import Foundation
import Testing
@_spi(Fuzzing) @testable import LiveBind
@testable import LiveBindEngine
#if canImport(Glibc)
import Glibc
#endif

extension ReliabilityTests {
    @Suite("Slow clients (slowloris)") struct SlowClientTests {
        static let slowCount = 20

        /// Headers sent a byte at a time and never finished, and bodies shorter than their
        /// `Content-Length` trickled a byte at a time: both are cut at the request timeout, while
        /// ordinary requests on other connections are answered all along and nothing is written.
        @Test func slowHeadersAndTrickledBodiesAreTimedOutWhileNormalRequestsAreServed() throws {
            let store = Store()
            try store.put("m", ["v": 0])
            try withRunningServer(
                store: store,
                configure: {
                    $0.network.requestTimeout = .seconds(2)
                    $0.streams.heartbeat = .milliseconds(500)
                    $0.network.connectionTimeout = 1
                }
            ) { port in
                let headerTrickle =
                    Array("GET /models/m HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                    + Array(repeating: UInt8(ascii: "a"), count: 10_000)
                let bodyHead =
                    "PUT /models/m/v HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 1000\r\n\r\n"
                var clients: [(socket: TestSocket, trickle: [UInt8], sent: Int, closed: Bool)] = []
                for index in 0..<Self.slowCount {
                    let socket = try TestSocket(port: port, timeout: 5)
                    if index % 2 == 0 {
                        clients.append((socket, headerTrickle, 0, false))
                    } else {
                        try socket.send(bodyHead)
                        clients.append((socket, Array(repeating: UInt8(ascii: "1"), count: 1000), 0, false))
                    }
                }
                var served = 0
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(30)
                // One byte per client every ~0.25 s: an idle timeout never fires, only the request deadline.
                while clients.contains(where: { !$0.closed }) && clock.now < deadline {
                    for index in clients.indices where !clients[index].closed {
                        let client = clients[index]
                        if peerClosed(client.socket, seconds: 0) || client.sent >= client.trickle.count {
                            clients[index].closed = true
                            continue
                        }
                        let byte = [client.trickle[client.sent]]
                        let count = byte.withUnsafeBytes { send(client.socket.fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                        if count == 1 { clients[index].sent += 1 } else if errno != EAGAIN { clients[index].closed = true }
                    }
                    // Meanwhile the server answers everyone else.
                    let read = try TestHTTPClient.request(port: port, "GET", "/models/m", timeout: 5)
                    let health = try TestHTTPClient.request(port: port, "GET", "/healthz", timeout: 5)
                    #expect(read.status == 200 && health.status == 200)
                    served += 2
                    usleep(250_000)
                }
                let cut = clients.filter(\.closed).count
                #expect(cut == Self.slowCount)
                #expect(clients.allSatisfy { $0.sent < $0.trickle.count }, "a slow client got to finish its request")
                let metrics = try readMetrics(port: port)
                #expect(metrics["livebind_slow_requests_closed_total", default: 0] >= Self.slowCount)
                #expect(try store.value(of: "m", at: Path(pointer: "/v")) == 0)
                let write = try TestHTTPClient.send(port: port, "PUT", "/models/m/v", "1")
                #expect(write.status == 200)
                let trickled = clients.map(\.sent).reduce(0, +)
                print(
                    "Slowloris: \(cut) of \(Self.slowCount) slow clients cut (\(Self.slowCount / 2) slow headers, "
                        + "\(Self.slowCount / 2) trickled bodies; \(trickled) bytes trickled), \(served) normal requests served meanwhile")
            }
        }

        /// Each request on a kept-alive connection gets the full request timeout; a connection left
        /// idle past it is closed.
        @Test func aKeptAliveConnectionServesEachPromptRequestAndIsClosedWhenLeftIdle() throws {
            try withRunningServer(configure: { $0.network.requestTimeout = .seconds(1) }) { port in
                let socket = try TestSocket(port: port, timeout: 5)
                for _ in 0..<4 {
                    try socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    let response = try TestHTTPClient.readResponse(from: socket)
                    #expect(response.status == 200)
                    usleep(300_000)  // well inside the timeout, which starts again after each answer
                }
                #expect(peerClosed(socket, seconds: 10))
            }
        }

        /// A request that stops arriving altogether is closed too, and an open event stream is not
        /// limited by the request deadline.
        @Test func aStalledRequestIsClosedButAnEventStreamOutlivesTheRequestTimeout() throws {
            let store = Store()
            try store.put("m", ["v": 0])
            try withRunningServer(store: store, configure: { $0.network.requestTimeout = .milliseconds(500) }) { port in
                let stream = try TestEventStream(port: port, target: "/events?model=m", timeout: 10)
                #expect(try stream.next()?.type == "snapshot")
                let stalled = try TestSocket(port: port, timeout: 5)
                try stalled.send(
                    "POST /models/m HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{")
                #expect(peerClosed(stalled, seconds: 10))
                usleep(1_000_000)  // twice the request timeout: the stream must not be cut by it
                try store.set(5, at: Path(pointer: "/v"), in: "m")
                let event = try stream.next()
                #expect(event?.type == "set")
                #expect(try store.value(of: "m", at: Path(pointer: "/v")) == 5)
            }
        }
    }
}
